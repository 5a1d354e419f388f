import Foundation
import TestSupport
import Testing

/// Two live mounts on two databases of one server: the mounts sync in the background, so what is
/// done in one shows in the other without any `notesfs sync`.
@Suite(.tags(.mount, .postgres), .needsFUSE, .needsPostgres) struct MountSyncTests {
    @Test func changesInOneMountShowInTheOther() throws {
        let (_, machines) = try makeMachines(2)
        let a = try syncedMount(machines[0].path)
        defer { a.close() }
        let b = try syncedMount(machines[1].path)
        defer { b.close() }
        #expect(a.log.contains("background sync started"))

        try a.write("Plan.md", "first line\n")
        #expect(eventually { b.read("Plan.md") == "first line\n" }, "created in A, not seen in B: \(b.log)")
        try a.write("Plan.md", "first line\nsecond line\n")
        #expect(eventually { b.read("Plan.md") == "first line\nsecond line\n" }, "edited in A, not seen in B")
        try FileManager.default.moveItem(atPath: a.path + "/Plan.md", toPath: a.path + "/Plan v2.md")
        #expect(eventually { b.read("Plan v2.md") == "first line\nsecond line\n" && !b.exists("Plan.md") }, "renamed in A")
        try FileManager.default.createDirectory(atPath: a.path + "/Work", withIntermediateDirectories: false)
        try FileManager.default.moveItem(atPath: a.path + "/Plan v2.md", toPath: a.path + "/Work/Plan v2.md")
        #expect(eventually { b.read("Work/Plan v2.md") == "first line\nsecond line\n" && !b.exists("Plan v2.md") }, "moved in A")
        // And back: B edits, A sees it; B deletes, A sees it gone.
        try b.write("Work/Plan v2.md", "first line\nsecond line\nthird line from B\n")
        #expect(eventually { a.read("Work/Plan v2.md") == "first line\nsecond line\nthird line from B\n" }, "edited in B")
        try FileManager.default.removeItem(atPath: b.path + "/Work/Plan v2.md")
        #expect(eventually { !a.exists("Work/Plan v2.md") && a.exists("Work") }, "deleted in B")
        try FileManager.default.removeItem(atPath: a.path + "/Work")
        #expect(eventually { !b.exists("Work") }, "folder deleted in A")
        for machine in machines {
            #expect(eventually { (try? notesfs(machine.path, ["sync", "status"]))?.out.contains("pending changes: 0") == true })
        }
    }

    @Test func nosyncMountsWithoutSyncing() throws {
        let (_, machines) = try makeMachines(1)
        // `-o nosync` is the mount's own option: libfuse never sees it (it would refuse it).
        let mount = try syncedMount(machines[0].path, options: ["-o", "nosync"])
        defer { mount.close() }
        try mount.write("Local.md", "kept here\n")
        #expect(!mount.log.contains("background sync started"))
        #expect(try notesfs(machines[0].path, ["sync", "status"]).out.contains("pending changes: 1"))
        #expect(try notesfs(machines[0].path, ["sync"]).stderr.contains("synced: 1 pushed"))
    }

    @Test func aMountWhoseServerIsDownServesAndSaysWhy() throws {
        let (_, machines) = try makeMachines(1)
        let db = machines[0].path
        let stateFile = db + "/sync/state.json"
        let missing = "/tmp/notesfs-no-server-" + UUID().uuidString
        let state = try String(contentsOfFile: stateFile, encoding: .utf8)
        let pointedAway = state.replacingOccurrences(of: #"host=[^ "]+"#, with: "host=\(missing)", options: .regularExpression)
        #expect(pointedAway != state)
        try pointedAway.write(toFile: stateFile, atomically: true, encoding: .utf8)
        let mount = try syncedMount(db)
        defer { mount.close() }
        try mount.write("Offline.md", "written with the server down\n")
        #expect(mount.read("Offline.md") == "written with the server down\n")
        #expect(eventually { mount.log.contains("sync: server: ") && mount.log.contains(missing) }, "log: \(mount.log)")
        let status = try notesfs(db, ["sync", "status"])
        #expect(status.out.contains("last error: server: "))
        #expect(status.out.contains("pending changes: 1"))
    }
}
