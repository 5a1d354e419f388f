import Foundation
import Notes
import TestSupport
import Testing

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// What a mount pushes is what a writer closed or fsynced: never the bytes of a file still open
/// for writing that another handle's close happened to save (a child that inherited the
/// descriptor and exec'd: each such close is a FUSE flush).
@Suite struct MountOpenWriterTests {
    func text(on machine: Machine, title: String) throws -> String? {
        try machine.sync()
        return try machine.notes().first { $0.title == title }?.text
    }

    /// Writes note `title` in mount `a` and waits until machine `b` syncs it: the mount's sync ran
    /// a pass after every save before it.
    func expectPushed(_ title: String, from a: ChildMount, to b: Machine, sourceLocation: SourceLocation = #_sourceLocation) throws {
        try a.write(title + ".md", "marker\n")
        #expect(eventually { (try? text(on: b, title: title)) == "marker\n" }, "\(a.log)", sourceLocation: sourceLocation)
    }

    @Test(.tags(.mount, .postgres), .needsFUSE, .needsPostgres) func aFileOpenForWritingIsPushedOnlyOnceClosedOrFsynced() throws {
        let (_, machines) = try makeMachines(2)
        let b = machines[1]
        let a = try syncedMount(machines[0].path)
        defer { a.close() }
        try a.write("Merge.md", "line one\nline two\n")
        #expect(eventually { (try? text(on: b, title: "Merge")) == "line one\nline two\n" }, "\(a.log)")

        let fd = open(a.path + "/Merge.md", O_WRONLY)
        #expect(fd >= 0)
        #expect(ftruncate(fd, 0) == 0)
        #expect(write(fd, "ten bytes!", 10) == 10)
        // A child inherits the descriptor and closes it: the mount saves the half-written bytes.
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/bin/true")
        try child.run()
        child.waitUntilExit()
        #expect(eventually { (try? notesfs(machines[0].path, ["note", "cat", "Merge"]))?.out == "ten bytes!" })
        // Saved locally, held back from the server while the writer has it open: a later note
        // saved in the same mount wakes its sync again, and once that note reaches B, every pass
        // that saw the held-back bytes has pushed what it was going to push.
        try expectPushed("Marker 1", from: a, to: b)
        #expect(try text(on: b, title: "Merge") == "line one\nline two\n")
        #expect(try notesfs(machines[0].path, ["sync", "status"]).out.contains("pending changes: 1"))

        // fsync: the writer means these bytes.
        #expect(write(fd, " more", 5) == 5)
        #expect(fsync(fd) == 0)
        #expect(eventually { (try? text(on: b, title: "Merge")) == "ten bytes! more" }, "\(a.log)")
        // A write after it waits for the close.
        #expect(write(fd, " end", 4) == 4)
        let second = Process()
        second.executableURL = URL(fileURLWithPath: "/bin/true")
        try second.run()
        second.waitUntilExit()
        #expect(eventually { (try? notesfs(machines[0].path, ["note", "cat", "Merge"]))?.out == "ten bytes! more end" })
        try expectPushed("Marker 2", from: a, to: b)
        #expect(try text(on: b, title: "Merge") == "ten bytes! more")
        #expect(close(fd) == 0)
        #expect(eventually { (try? text(on: b, title: "Merge")) == "ten bytes! more end" }, "\(a.log)")
    }
}

/// `notesfs sync` run beside a mount holds back what the mount's own sync holds back.
@Suite struct CLIBesideMountWriterTests {
    @Test(.tags(.mount, .postgres), .needsFUSE, .needsPostgres) func theCLIDoesNotPushAFileTheMountHoldsOpenForWriting() throws {
        let (_, machines) = try makeMachines(2)
        let b = machines[1]
        let a = try syncedMount(machines[0].path)
        defer { a.close() }
        try a.write("Merge.md", "line one\nline two\n")
        #expect(eventually { (try? MountOpenWriterTests().text(on: b, title: "Merge")) == "line one\nline two\n" }, "\(a.log)")
        let fd = open(a.path + "/Merge.md", O_WRONLY)
        #expect(fd >= 0)
        defer { close(fd) }
        #expect(ftruncate(fd, 0) == 0)
        #expect(write(fd, "ten bytes!", 10) == 10)
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/bin/true")
        try child.run()
        child.waitUntilExit()
        #expect(eventually { (try? notesfs(machines[0].path, ["note", "cat", "Merge"]))?.out == "ten bytes!" })
        // The mount's sync, woken by the save, has published the writer it holds back.
        #expect(eventually { FileManager.default.fileExists(atPath: machines[0].path + "/sync/writers") }, "\(a.log)")
        let run = try notesfs(machines[0].path, ["sync"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(try MountOpenWriterTests().text(on: b, title: "Merge") == "line one\nline two\n")
    }
}
