import Foundation
import Notes
import RecordStore
import Sync
import TestSupport
import Testing

/// The server goes down, two machines edit offline (the same notes and different ones), the server
/// comes back: both converge to the same tree and nothing either wrote is lost.
///
/// This suite stops its server, so it runs on a cluster of its own (the shared one stays up for
/// the suites running beside it).
@Suite(.tags(.postgres), .needsPostgres) struct OfflineConvergenceTests {
    static func lines(_ prefix: String, _ count: Int) -> String { (1...count).map { "\(prefix) line \($0)\n" }.joined() }

    func edit(_ machine: Machine, _ name: String, _ change: (inout Note) -> Void) throws {
        var note = try machine.note(name)
        change(&note)
        try machine.save([note.record])
    }

    func replacing(_ old: String, with new: String) -> (inout Note) -> Void {
        { $0.text = $0.text.replacingOccurrences(of: old + "\n", with: new + "\n") }
    }

    /// Every exported note's lines, by file path relative to `directory`.
    func exportedLines(_ directory: String) throws -> [String: [String]] {
        var files: [String: [String]] = [:]
        let enumerator = FileManager.default.enumerator(atPath: directory)
        while let path = enumerator?.nextObject() as? String {
            guard path.hasSuffix(".md") else { continue }
            let text = try String(contentsOfFile: directory + "/" + path, encoding: .utf8)
            files[path] = text.split(separator: "\n").map(String.init)
        }
        return files
    }

    @Test func machinesThatEditedOfflineConvergeAndLoseNothing() throws {
        let server = try TestCluster()
        let (_, machines) = try makeMachines(2, on: server)
        let (a, b) = (machines[0], machines[1])
        var written = Set<String>()
        let seed = [
            ("shared", "Shared", Self.lines("shared", 10)), ("overlap", "Overlap", Self.lines("overlap", 5)),
            ("doomed", "Doomed", Self.lines("doomed", 3)), ("quiet", "Quiet", Self.lines("quiet", 2)),
        ]
        try a.save([folder("Work", id: "work")] + seed.map { note($0.1, id: $0.0, text: $0.2, folder: "work") })
        for entry in seed { written.formUnion(entry.2.split(separator: "\n").map(String.init)) }
        try syncAll(machines)
        #expect(try b.notes().count == 4)

        try server.stop()
        // Non-overlapping edits of one note, overlapping edits of another, a delete against an
        // edit, and a new note on each side.
        try edit(a, "shared", replacing("shared line 2", with: "shared line 2 edited by A"))
        try edit(b, "shared", replacing("shared line 9", with: "shared line 9 edited by B"))
        try edit(a, "overlap", replacing("overlap line 3", with: "overlap line 3 by A"))
        try edit(b, "overlap", replacing("overlap line 3", with: "overlap line 3 by B"))
        try a.database.modify(deleting: [RecordID(recordName: "doomed")])
        try edit(b, "doomed") { $0.text += "doomed edited by B while A deleted it\n" }
        try a.save([note("Only A", id: "only-a", text: Self.lines("only A", 3), folder: "work")])
        try b.save([note("Only B", id: "only-b", text: Self.lines("only B", 4))])
        written.formUnion([
            "shared line 2 edited by A", "shared line 9 edited by B", "overlap line 3 by A", "overlap line 3 by B",
            "doomed edited by B while A deleted it",
        ])
        written.formUnion((Self.lines("only A", 3) + Self.lines("only B", 4)).split(separator: "\n").map(String.init))
        written.subtract(["shared line 2", "shared line 9", "overlap line 3"])  // replaced by their edits

        // A sync with the server down fails clearly, says so in `sync status`, and keeps every change pending.
        let failed = try notesfs(a.path, ["sync"])
        #expect(failed.status != 0)
        #expect(failed.stderr.contains("server: "))
        let status = try notesfs(a.path, ["sync", "status"])
        #expect(status.out.contains("last error: server: "))
        #expect(status.out.contains("Is the server running"))
        // shared, overlap, doomed (deleted), only-a, and the versions the two edits and the delete kept
        #expect(status.out.contains("pending changes: 7"))
        #expect(try a.note("shared").text.contains("shared line 2 edited by A"))
        #expect(!a.has("doomed"))

        try server.start()
        for machine in [a, b, a, b] { try machine.sync() }

        let exports = try [a, b].map { machine in
            let directory = machine.path + "-export"
            let run = try notesfs(machine.path, ["export", directory])
            #expect(run.status == 0, "export: \(run.stderr)")
            return directory
        }
        let diff = try run("/usr/bin/diff", ["-r", exports[0], exports[1]], mergingErrors: true)
        #expect(diff.status == 0, "the two machines' trees differ:\n\(diff.out)")

        let files = try exportedLines(exports[0])
        #expect(
            files["Work/Shared.md"]
                == Self.lines("shared", 10).split(separator: "\n").map(String.init).map {
                    $0 == "shared line 2" ? "shared line 2 edited by A" : $0 == "shared line 9" ? "shared line 9 edited by B" : $0
                })
        // A synced first after the outage: its text stays under the note's name, B's goes to a copy.
        #expect(files["Work/Overlap.md"]?.contains("overlap line 3 by A") == true)
        let copies = files.filter { $0.key.hasPrefix("Work/Overlap (conflict ") }
        #expect(copies.count == 1)
        #expect(copies.first?.value.contains("overlap line 3 by B") == true)
        #expect(files["Work/Doomed.md"]?.last == "doomed edited by B while A deleted it")
        #expect(files["Work/Only A.md"] != nil && files["Only B.md"] != nil)
        // Nothing lost: every line either machine wrote is in some note.
        let present = Set(files.values.joined())
        #expect(written.subtracting(present).isEmpty, "lost lines: \(written.subtracting(present).sorted())")
        #expect(written.count == 20 + 12 - 3)  // seeded, written offline, replaced
        for machine in [a, b] {
            let status = try notesfs(machine.path, ["sync", "status"])
            #expect(status.out.contains("pending changes: 0"))
            #expect(!status.out.contains("last error"))
        }
        #expect(try notesfs(b.path, ["sync", "status"]).out.contains("conflicts: 1"))
    }
}
