/// Extended attributes kept in the records (`user.`, `trusted.`, `security.`), through a real mount:
/// any bytes, the kernel's bounds, the create/replace flags, renames, `cp -a`, `rsync -X`, a file not
/// saved yet, a remount, and who may set them.

import CFuse
import Foundation
import Glibc
import Notes
import RecordStore
import TestSupport
import Testing

/// The value of `name` on `path` as bytes; nil (errno set) on error.
private func xattrBytes(_ path: String, _ name: String) -> [UInt8]? {
    var buffer = [UInt8](repeating: 0, count: 70_000)
    let count = getxattr(path, name, &buffer, buffer.count)
    return count < 0 ? nil : Array(buffer.prefix(count))
}

private func setBytes(_ path: String, _ name: String, _ value: [UInt8], _ flags: Int32 = 0) -> Int32 {
    errnoOf { setxattr(path, name, value, value.count, flags) }
}

/// The names `listxattr` gives for `path`.
private func xattrNames(_ path: String) -> Set<String> {
    var buffer = [CChar](repeating: 0, count: 65_536)
    let count = listxattr(path, &buffer, buffer.count)
    guard count > 0 else { return [] }
    return Set(buffer.prefix(count).split(separator: 0).map { String(decoding: $0.map { UInt8(bitPattern: $0) }, as: UTF8.self) })
}

@Suite(.tags(.mount), .needsFUSE) struct ExtendedAttributeTests {
    static let binary: [UInt8] = [0, 1, 2, 0xFF, 0xFE, 10, 0] + Array("https://example.org/ü".utf8)

    @Test func anyBytesAreKeptAndListedAndSurviveRenameAndRemount() throws {
        try withDatabaseDirectory { path in
            try withNotesMount(databasePath: path) { m in
                #expect(writeFile(m.path("n.md"), "text") == 0)
                #expect(mkdir(m.path("dir"), 0o755) == 0)
                #expect(setBytes(m.path("n.md"), "user.xdg.origin.url", Self.binary) == 0)
                #expect(setBytes(m.path("n.md"), "user.empty", []) == 0)
                #expect(setBytes(m.path("dir"), "user.xdg.tags", Array("red,blue".utf8)) == 0)
                #expect(setBytes(m.path("n.md"), "trusted.overlay", [7]) == 0, "root may set trusted.*")
                #expect(setBytes(m.path("n.md"), "security.test", [8]) == 0, "root may set security.*")
                #expect(xattrBytes(m.path("n.md"), "user.xdg.origin.url") == Self.binary)
                #expect(xattrBytes(m.path("n.md"), "user.empty") == [])
                #expect(xattrBytes(m.path("dir"), "user.xdg.tags") == Array("red,blue".utf8))
                #expect(
                    xattrNames(m.path("n.md")).isSuperset(of: ["user.xdg.origin.url", "user.empty", "trusted.overlay", "security.test"]))
                #expect(!xattrNames(m.path("n.md")).contains("user.notesfs.recordName"), "read by name, not listed")
                #expect(rename(m.path("n.md"), m.path("dir/renamed.md")) == 0)
                #expect(xattrBytes(m.path("dir/renamed.md"), "user.xdg.origin.url") == Self.binary)
                // The text is untouched by attribute changes.
                #expect(readFile(m.path("dir/renamed.md")) == "text")
            }
            try withNotesMount(databasePath: path) { m in
                #expect(xattrBytes(m.path("dir/renamed.md"), "user.xdg.origin.url") == Self.binary)
                #expect(xattrBytes(m.path("dir"), "user.xdg.tags") == Array("red,blue".utf8))
                #expect(errnoOf { removexattr(m.path("dir/renamed.md"), "user.xdg.origin.url") } == 0)
                #expect(xattrBytes(m.path("dir/renamed.md"), "user.xdg.origin.url") == nil && errno == ENODATA)
                #expect(xattrBytes(m.path("dir/renamed.md"), "user.empty") == [])
            }
        }
    }

    @Test func flagsAndBoundsGiveTheKernelsErrors() throws {
        try withNotesMount { m in
            let file = m.path("b.md")
            #expect(writeFile(file, "x") == 0)
            #expect(setBytes(file, "user.a", [1], Int32(XATTR_REPLACE)) == ENODATA)
            #expect(setBytes(file, "user.a", [1], Int32(XATTR_CREATE)) == 0)
            #expect(setBytes(file, "user.a", [2], Int32(XATTR_CREATE)) == EEXIST)
            #expect(setBytes(file, "user.a", [3], Int32(XATTR_REPLACE)) == 0)
            #expect(xattrBytes(file, "user.a") == [3])
            #expect(errnoOf { removexattr(file, "user.missing") } == ENODATA)
            #expect(setBytes(file, "user." + String(repeating: "n", count: 250), [1]) == 0, "a 255-byte name")
            #expect(setBytes(file, "user." + String(repeating: "n", count: 251), [1]) == ERANGE, "a 256-byte name")
            let largest = [UInt8](repeating: 0xAB, count: 65_536)
            #expect(setBytes(file, "user.big", largest) == 0)
            #expect(xattrBytes(file, "user.big") == largest)
            #expect(setBytes(file, "user.bigger", largest + [1]) == E2BIG)
            // 256 KiB in all: the fourth 64 KiB value no longer fits.
            #expect(setBytes(file, "user.big2", largest) == 0)
            #expect(setBytes(file, "user.big3", largest) == 0)
            #expect(setBytes(file, "user.big4", largest) == ENOSPC)
            #expect(errnoOf { setxattr(file, "system.foo", "v", 1, 0) } == EOPNOTSUPP)
            #expect(errnoOf { setxattr(file, "user.notesfs.changeTag", "v", 1, 0) } == EPERM)
            #expect(readFile(file) == "x")
        }
    }

    @Test func cpAndRsyncCarryThemInAndOut() throws {
        let outside = makeTemporaryDirectory("xattrsrc")
        defer { try? FileManager.default.removeItem(atPath: outside) }
        #expect(
            try sh("printf hello > \(shellQuoted(outside))/a.md && setfattr -n user.color -v blue \(shellQuoted(outside))/a.md").status == 0
        )
        #expect(
            try sh("printf bin > \(shellQuoted(outside))/p.bin && setfattr -n user.origin -v 0x00ff10 \(shellQuoted(outside))/p.bin").status
                == 0)
        try withNotesMount { m in
            #expect(try sh("cp -a \(shellQuoted(outside))/a.md \(shellQuoted(m.root))/cp.md").status == 0)
            #expect(xattrBytes(m.path("cp.md"), "user.color") == Array("blue".utf8))
            #expect(readFile(m.path("cp.md")) == "hello")
            let rsync = try sh("rsync -aX \(shellQuoted(outside))/ \(shellQuoted(m.path("synced")))/")
            #expect(rsync.status == 0, "\(rsync.stderr)")
            #expect(xattrBytes(m.path("synced/a.md"), "user.color") == Array("blue".utf8))
            #expect(xattrBytes(m.path("synced/p.bin"), "user.origin") == [0x00, 0xFF, 0x10])
            let back = outside + "/back"
            #expect(try sh("cp -a \(shellQuoted(m.path("synced"))) \(shellQuoted(back))").status == 0)
            #expect(xattrBytes(back + "/p.bin", "user.origin") == [0x00, 0xFF, 0x10])
            // sed -i's temp file carries none: as on any filesystem, the name then shows the new file's.
            #expect(try sh("sed -i s/hello/bye/ \(shellQuoted(m.path("cp.md")))").status == 0)
            #expect(readFile(m.path("cp.md")) == "bye")
        }
    }

    /// `a.txt` → `a.md` makes another record (an attachment becomes a note): the file keeps its
    /// attributes, mode and owner all the same.
    @Test func aRenameThatChangesTheRecordTypeKeepsTheFile() throws {
        try withNotesMount { m in
            #expect(writeFile(m.path("a.txt"), "plain", mode: 0o640) == 0)
            #expect(chown(m.path("a.txt"), 1000, 1000) == 0)
            #expect(setBytes(m.path("a.txt"), "user.k", [9]) == 0)
            #expect(rename(m.path("a.txt"), m.path("a.md")) == 0)
            var st = stat()
            #expect(stat(m.path("a.md"), &st) == 0)
            #expect(st.st_uid == 1000 && st.st_gid == 1000 && st.st_mode & 0o7777 == 0o640)
            #expect(xattrBytes(m.path("a.md"), "user.k") == [9])
            #expect(readFile(m.path("a.md")) == "plain")
        }
    }

    @Test func aFileNotSavedYetKeepsThemForItsFirstSave() throws {
        try withNotesMount { m in
            let fd = open(m.path("new.md"), O_CREAT | O_WRONLY | O_CLOEXEC, 0o644)
            #expect(fd >= 0)
            #expect(write(fd, "body", 4) == 4)
            #expect(errnoOf { fsetxattr(fd, "user.k", "v1", 2, 0) } == 0)
            #expect(close(fd) == 0)
            #expect(xattrBytes(m.path("new.md"), "user.k") == Array("v1".utf8))
            let record = try #require(try m.database.query(Query(recordType: Note.recordType)).records.first)
            #expect(ExtendedAttributes(try m.database.record(for: record.recordID))["user.k"] == Array("v1".utf8))
            // A writer open across an attribute change still saves its bytes (no ESTALE).
            let writer = open(m.path("new.md"), O_WRONLY | O_APPEND | O_CLOEXEC)
            #expect(write(writer, " more", 5) == 5)
            #expect(setBytes(m.path("new.md"), "user.k", Array("v2".utf8)) == 0)
            #expect(fsync(writer) == 0)
            #expect(close(writer) == 0)
            #expect(readFile(m.path("new.md")) == "body more")
            #expect(xattrBytes(m.path("new.md"), "user.k") == Array("v2".utf8))
        }
    }

    @Test func onlyWhoMayWriteSetsAndTrustedIsRootsAlone() throws {
        try withNotesMount(mountOptions: ["allow_other"]) { m in
            #expect(writeFile(m.path("mine.md"), "x", mode: 0o644) == 0)
            #expect(setBytes(m.path("mine.md"), "trusted.secret", [1]) == 0)
            let path = shellQuoted(m.path("mine.md"))
            func asOther(_ command: String) throws -> ProgramResult {
                try run(["/usr/bin/setpriv", "--reuid=1001", "--regid=1001", "--clear-groups", "/bin/sh", "-c", command])
            }
            let setUser = try asOther("setfattr -n user.x -v 1 \(path)")
            let dump = try asOther("getfattr -d -m - \(path)")
            let setTrusted = try asOther("setfattr -n trusted.y -v 1 \(path)")
            let readOwn = try asOther("getfattr -n user.notesfs.recordName \(path)")
            #expect(setUser.status != 0, "no write permission")
            #expect(dump.status == 0 && !dump.out.contains("trusted."), "\(dump)")
            #expect(setTrusted.status != 0)
            #expect(readOwn.status == 0, "readable by all who may read")
            #expect(xattrBytes(m.path("mine.md"), "user.x") == nil)
        }
    }
}
