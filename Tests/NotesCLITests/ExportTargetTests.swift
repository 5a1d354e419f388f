/// Export writes nothing through what is already in its target (a
/// symbolic link another user put there, a hard link), import is not steered out of its source by
/// a symlinked directory, `note edit` makes its file new, and devices are made only on request.

import Foundation
import Notes
import RecordStore
import TestSupport
import Testing

@testable import NotesCLI

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

@Suite struct ExportTargetTests {
    /// The user who plants links in the target (`nobody`).
    static let otherUser: uid_t = 65534

    private func contents(_ path: String) -> String? {
        FileManager.default.contents(atPath: path).map { String(decoding: $0, as: UTF8.self) }
    }

    /// A database holding `Plan.md` and `Work/inside.md`, and a root-only secret beside it.
    private func seed(_ label: String) throws -> (db: String, scratch: String, secret: String) {
        let db = makeDatabasePath(label)
        let store = try RecordDatabase(path: db, backgroundThread: false)
        let work = Folder(name: "Work")
        try store.modify(saving: [
            Note(title: "Plan", text: "new plan").record, work.record, Note(title: "inside", text: "in work", folder: work.recordID).record,
        ])
        try store.close()
        let scratch = (db as NSString).deletingLastPathComponent
        let secret = scratch + "/secret"
        try #require(
            FileManager.default.createFile(atPath: secret, contents: Data("top secret".utf8), attributes: [.posixPermissions: 0o600]))
        return (db, scratch, secret)
    }

    /// `out` owned by the other user, holding `name` → `target`, a symlink the other user owns.
    private func plantedTarget(_ scratch: String, name: String, pointingAt target: String) throws -> String {
        let out = scratch + "/out"
        try #require(mkdir(out, 0o755) == 0)
        try #require(chown(out, Self.otherUser, gid_t(Self.otherUser)) == 0)
        try #require(symlink(target, out + "/" + name) == 0)
        try #require(lchown(out + "/" + name, Self.otherUser, gid_t(Self.otherUser)) == 0)
        return out
    }

    @Test(.enabled(if: getuid() == 0, "lchown to another user needs root"))
    func exportDoesNotWriteThroughAnotherUsersSymlink() throws {
        let (db, scratch, secret) = try seed("export-symlink")
        let out = try plantedTarget(scratch, name: "Plan.md", pointingAt: secret)
        let export = try notesfs(["export", out], db: db)
        #expect(export.status != 0)
        #expect(
            export.stderr.contains("notesfs: \(out)/Plan.md: a symbolic link is in the way (not followed, not replaced)"),
            "\(export.stderr)")
        #expect(contents(secret) == "top secret")
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: out + "/Plan.md")) == secret)
        // The rest is exported.
        #expect(contents(out + "/Work/inside.md") == "in work")
    }

    @Test(.enabled(if: getuid() == 0, "lchown to another user needs root"))
    func exportDoesNotEnterAnotherUsersSymlinkedDirectory() throws {
        let (db, scratch, _) = try seed("export-dirlink")
        let elsewhere = scratch + "/elsewhere"
        try #require(mkdir(elsewhere, 0o700) == 0)
        let out = try plantedTarget(scratch, name: "Work", pointingAt: elsewhere)
        let export = try notesfs(["export", out], db: db)
        #expect(export.status != 0)
        #expect(
            export.stderr.contains("notesfs: \(out)/Work: a symbolic link is in the way (not followed, not replaced)"), "\(export.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere).isEmpty)
        #expect(contents(out + "/Plan.md") == "new plan")
    }

    @Test func exportReplacesAHardLinkInsteadOfWritingThroughIt() throws {
        let (db, scratch, secret) = try seed("export-hardlink")
        let out = scratch + "/out"
        try #require(mkdir(out, 0o755) == 0)
        try #require(link(secret, out + "/Plan.md") == 0)
        let export = try notesfs(["export", out], db: db)
        #expect(export.status == 0, "\(export.stderr)")
        #expect(contents(secret) == "top secret")
        #expect(contents(out + "/Plan.md") == "new plan")
    }

    @Test func importDoesNotFollowASymlinkedDirectoryOutOfItsSource() throws {
        let scratch = makeTemporaryDirectory("import-dirlink")
        let outside = scratch + "/outside"
        let source = scratch + "/source"
        try #require(mkdir(outside, 0o755) == 0 && mkdir(source, 0o755) == 0)
        try #require(FileManager.default.createFile(atPath: outside + "/secret.md", contents: Data("outside".utf8)))
        try #require(FileManager.default.createFile(atPath: source + "/mine.md", contents: Data("mine".utf8)))
        try #require(symlink(outside, source + "/link") == 0)
        let db = scratch + "/db"
        let imported = try notesfs(["import", source], db: db)
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(try notesfs(["query", "title == 'secret'"], db: db).out == "")
        #expect(try notesfs(["ls", "-l"], db: db).lines.contains { $0.hasSuffix("  link -> \(outside)") })
        #expect(try notesfs(["note", "cat", "mine"], db: db).out == "mine")
    }

    @Test func noteEditFileIsNewAndNeverFollowed() throws {
        let scratch = makeTemporaryDirectory("edit-new")
        let secret = scratch + "/secret"
        try #require(FileManager.default.createFile(atPath: secret, contents: Data("top secret".utf8)))
        try #require(symlink(secret, scratch + "/Plan.md") == 0)
        #expect(throws: CLIError.self) { _ = try FileSystem.createNewFile(scratch + "/Plan.md") }
        #expect(contents(secret) == "top secret")
        let fd = try FileSystem.createNewFile(scratch + "/new.md")
        #expect(write(fd, "fresh", 5) == 5)
        close(fd)
        #expect(contents(scratch + "/new.md") == "fresh")
        // And note edit itself still works through it.
        let db = scratch + "/db"
        #expect(try notesfs(["note", "new", "Plan", "--text", "old"], db: db).status == 0)
        let edit = try notesfs(["note", "edit", "Plan"], db: db, environment: ["VISUAL": "sed -i s/old/edited/", "EDITOR": ""])
        #expect(edit.status == 0, "\(edit.stderr)")
        #expect(try notesfs(["note", "cat", "Plan"], db: db).out == "edited")
    }

    @Test func devicesAreExportedOnlyWithTheDevicesOption() throws {
        let db = makeDatabasePath("export-devices")
        let store = try RecordDatabase(path: db, backgroundThread: false)
        let rdev: UInt64 = 7 << 8  // loop0: major 7, minor 0
        try store.modify(saving: [
            SpecialFile(name: "disk", fileType: .block, rdev: rdev).record, SpecialFile(name: "pipe", fileType: .fifo).record,
        ])
        try store.close()
        let scratch = (db as NSString).deletingLastPathComponent

        let plain = try notesfs(["export", scratch + "/plain"], db: db)
        #expect(plain.status == 0, "\(plain.stderr)")
        #expect(plain.stderr.contains("(1 device skipped: use --devices)"), "\(plain.stderr)")
        #expect(try FileSystem.status(scratch + "/plain/disk") == nil)
        #expect(try FileSystem.status(scratch + "/plain/pipe")?.kind == .special)

        guard getuid() == 0 else { return }  // mknod of a device needs root
        let devices = try notesfs(["export", scratch + "/devices", "--devices"], db: db)
        #expect(devices.status == 0, "\(devices.stderr)")
        var st = stat()
        #expect(lstat(scratch + "/devices/disk", &st) == 0)
        #expect(st.st_mode & S_IFMT == S_IFBLK)
        #expect(UInt64(st.st_rdev) == rdev)
    }

    @Test func helpSaysWhatImportAndExportDoWithNodes() throws {
        let importHelp = try notesfs(["import", "--help"], db: nil).out
        #expect(!importHelp.contains("special files are skipped"))
        #expect(importHelp.contains("Symbolic links"))
        #expect(importHelp.contains("are imported as symbolic links"))
        #expect(try notesfs(["export", "--help"], db: nil).out.contains("--devices"))
    }
}
