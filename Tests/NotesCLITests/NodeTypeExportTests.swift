import Foundation
import RecordStore
import TestSupport
import Testing

/// Symlinks, FIFOs, sockets, devices and hard links through `import`, `ls -l` and `export`.
@Suite struct NodeTypeExportTests {
    /// Every non-directory under `root`: path, type, permissions, link count, size, symlink target, mtime.
    private func describe(_ root: String) throws -> String {
        try run("/usr/bin/find", [root, "-mindepth", "1", "!", "-type", "d", "-printf", "%P %y %m %n %s %l %T@ %D:%i\\n"]).out
            .split(separator: "\n").map { line in
                // Inode numbers differ between trees: dropped (%n, the link count, shows shared names).
                String(line.split(separator: " ").dropLast().joined(separator: " "))
            }.sorted().joined(separator: "\n")
    }

    @Test func importListAndExportRoundTrip() throws {
        let source = makeTemporaryDirectory("nodesrc")
        let script = """
            import os, socket, stat
            os.chdir('\(source)')
            open('Note.md', 'w').write('text\\n'); open('data.bin', 'wb').write(b'\\x00\\x01')
            os.mkdir('sub'); os.link('data.bin', 'sub/same.bin'); os.link('Note.md', 'Copy.md')
            os.symlink('Note.md', 'rel'); os.symlink(b'\\xff', b'odd'); os.link('rel', 'rel2', follow_symlinks=False)
            os.mkfifo('pipe', 0o640)
            s = socket.socket(socket.AF_UNIX); s.bind('sock'); s.close()
            os.mknod('null', 0o666 | stat.S_IFCHR, os.makedev(1, 3))
            for p in ['Note.md', 'data.bin', 'rel', 'odd', 'pipe', 'sock', 'null']:
                os.utime(p, (1_000_000_000, 1_000_000_000), follow_symlinks=False)
            """
        let made = try run("/usr/bin/python3", ["-c", script])
        try #require(made.status == 0, "\(made)")
        let db = makeDatabasePath("nodeimport")
        try notesfs(["folder", "new", "unused"], db: db)
        let imported = try notesfs(["import", source], db: db)
        #expect(imported.status == 0, "\(imported)")
        let long = try notesfs(["ls", "-l"], db: db)
        #expect(long.lines.contains { $0.contains("char 1, 3  2001-09-09") && $0.hasSuffix("  null") }, "\(long.out)")
        #expect(long.lines.contains { $0.hasSuffix("  pipe") && $0.contains("fifo") })
        #expect(long.lines.contains { $0.hasSuffix("  sock") && $0.contains("socket") })
        #expect(long.lines.contains { $0.hasSuffix("  rel -> Note.md") && $0.contains("7 2 links") })
        #expect(long.lines.contains { $0.hasSuffix("  rel2 -> Note.md") }, "a hard link to a symlink")
        #expect(long.lines.contains { $0.hasSuffix("  Copy.md") && $0.contains("5 2 links") })
        let target = makeTemporaryDirectory("nodeexport") + "/out"
        let exported = try notesfs(["export", target, "--devices"], db: db)
        #expect(exported.status == 0, "\(exported)")
        try #require(rmdir(target + "/unused") == 0)
        #expect(try describe(target) == describe(source))
    }

    @Test func fsckReportsBadNodeRecords() throws {
        let db = makeDatabasePath("nodefsck")
        try notesfs(["folder", "new", "F"], db: db)
        #expect(try notesfs(["fsck"], db: db).status == 0)
        do {
            let store = try RecordDatabase(path: db, backgroundThread: false)
            var special = Record(recordType: "SpecialFile", recordID: RecordID(recordName: "bad-special"))
            special["name"] = "weird"
            special["fileType"] = "door"
            let folder = try #require(store.queryMetadata(Query(recordType: "Folder")).first)
            var link = Record(recordType: "Link", recordID: RecordID(recordName: "bad-link"))
            link["name"] = "to-folder"
            link["target"] = .reference(Reference(recordID: folder.recordID, action: .deleteSelf))
            try store.modify(saving: [special, link])
            try store.close()
        }
        let fsck = try notesfs(["fsck"], db: db)
        #expect(fsck.status == 4, "\(fsck)")
        #expect(fsck.out.contains("weird (record bad-special): record bad-special: field fileType has the wrong type"), "\(fsck.out)")
        #expect(fsck.out.contains("to-folder (record bad-link): hard link to a Folder record"), "\(fsck.out)")
    }
}
