import Foundation
import TestSupport
import Testing

@testable import RecordStore

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// The database directory as a hostile or unlucky user leaves it: huge files, loose modes, folder
/// cycles, a read-only mount, a full disk, a directory that is not a database. Every command
/// finishes with a clear message and bounded memory.
@Suite(.serialized) struct DatabaseFileTests {
    /// Runs `notesfs` under `/usr/bin/time -v`; returns the result and the child's peak RSS in KiB.
    func measured(_ arguments: [String], db: String) throws -> (ProgramResult, Int) {
        let result = try run("/usr/bin/time", ["-v", notesfsBinary, "--db", db] + arguments)
        let line = result.stderr.split(separator: "\n").first { $0.contains("Maximum resident set size (kbytes):") }
        let kilobytes = line.flatMap { Int($0.split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? "") } ?? -1
        return (result, kilobytes)
    }

    /// A database with a folder, a note and an attachment; returns its path.
    func makeSample(_ label: String, base: String = NSTemporaryDirectory()) throws -> String {
        let tree = makeTemporaryDirectory(label + "-tree", base: base)
        try FileManager.default.createDirectory(atPath: tree + "/F", withIntermediateDirectories: true)
        try Data(Self.text.utf8).write(to: URL(fileURLWithPath: tree + "/F/n.md"))
        try Data([0, 1, 2, 3, 255]).write(to: URL(fileURLWithPath: tree + "/F/blob.bin"))
        let db = makeTemporaryDirectory(label, base: base) + "/db"
        let imported = try notesfs(["import", tree], db: db)
        #expect(imported.status == 0, "\(imported.stderr)")
        try? FileManager.default.removeItem(atPath: tree)
        return db
    }

    /// The record file of the note titled `title`, after a checkpoint (so that the journal no
    /// longer holds it: recovery at open would rewrite it).
    func recordFile(_ db: String, title: String) throws -> String {
        let database = try RecordDatabase(path: db, create: false, backgroundThread: false)
        try database.checkpoint()
        let note = try #require(database.queryMetadata(Query(recordType: "Note")).first { $0.record["title"] == .string(title) })
        return db + "/" + RecordFileName.relativePath(for: note.recordID.recordName)
    }

    func grow(_ path: String, to size: Int64) {
        let fd = open(path, O_WRONLY | O_CREAT, 0o600)
        #expect(fd >= 0 && ftruncate(fd, off_t(size)) == 0)
        close(fd)
    }

    static let rssLimitKB = 200 * 1024
    /// Longer than the index keeps in memory: `note cat` reads the record file.
    static let text = String(repeating: "hello, world\n", count: 40)

    @Test func aTenGigabyteRecordFileIsReportedAndMovedAsideInBoundedMemory() throws {
        let db = try makeSample("huge-record")
        let file = try recordFile(db, title: "n")
        grow(file, to: 10 << 30)

        let (ls, lsRSS) = try measured(["ls", "F"], db: db)
        #expect(ls.status == 0, "\(ls.stderr)")
        let (cat, catRSS) = try measured(["note", "cat", "F/n"], db: db)
        #expect(cat.status == 4)
        #expect(cat.stderr.contains("over the size limit"))
        let (fsck, fsckRSS) = try measured(["fsck"], db: db)
        #expect(fsck.status == 4)
        #expect(fsck.out.contains(file + ": damaged record file"))
        #expect(fsck.out.contains("over the size limit"))
        let (repair, repairRSS) = try measured(["fsck", "--repair"], db: db)
        #expect(repair.status == 0, "\(repair.out)\(repair.stderr)")
        #expect(repair.out.contains("moved aside: \(db)/lost+found/"))
        #expect(!FileManager.default.fileExists(atPath: file))
        #expect(try notesfs(["fsck"], db: db).status == 0)
        for (command, rss) in [("ls", lsRSS), ("note cat", catRSS), ("fsck", fsckRSS), ("fsck --repair", repairRSS)] {
            print("10 GB record file: notesfs \(command) peak RSS \(rss) KiB")
            #expect(rss > 0 && rss < Self.rssLimitKB, "notesfs \(command): \(rss) KiB")
        }
    }

    @Test func aTenGigabyteRecordFileWithTheIndexMissing() throws {
        let db = try makeSample("huge-noindex")
        #expect(try notesfs(["fsck"], db: db).status == 0)
        let file = try recordFile(db, title: "n")
        grow(file, to: 10 << 30)
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: db + "/indexes/records.sqlite" + suffix) }
        // The index is rebuilt from the record files: the huge one is skipped, not read.
        let (ls, lsRSS) = try measured(["ls", "F"], db: db)
        #expect(ls.status == 0, "\(ls.stderr)")
        #expect(ls.out == "blob.bin\n")
        let (fsck, fsckRSS) = try measured(["fsck"], db: db)
        #expect(fsck.status == 4)
        #expect(fsck.out.contains("over the size limit"))
        let (repair, repairRSS) = try measured(["fsck", "--repair"], db: db)
        #expect(repair.status == 0, "\(repair.out)\(repair.stderr)")
        for (command, rss) in [("ls", lsRSS), ("fsck", fsckRSS), ("fsck --repair", repairRSS)] {
            print("10 GB record file, no index file: notesfs \(command) peak RSS \(rss) KiB")
            #expect(rss > 0 && rss < Self.rssLimitKB, "notesfs \(command): \(rss) KiB")
        }
    }

    @Test func aTenGigabyteJournalIsMovedAsideInBoundedMemory() throws {
        let db = try makeSample("huge-journal")
        let journal = db + "/journal.jsonl"
        let size = try #require(try FileManager.default.attributesOfItem(atPath: journal)[.size] as? Int)
        grow(journal, to: 10 << 30)
        let (ls, lsRSS) = try measured(["ls", "F"], db: db)
        #expect(ls.status == 0, "\(ls.stderr)")
        #expect(ls.out == "blob.bin\nn.md\n")
        #expect(ls.stderr.contains("longer than"))
        #expect(ls.stderr.contains("lost+found"))
        #expect(try FileManager.default.attributesOfItem(atPath: journal)[.size] as? Int == size)
        let (fsck, fsckRSS) = try measured(["fsck"], db: db)
        #expect(fsck.status == 0, "\(fsck.out)")
        // The whole file as it was, in lost+found.
        let moved = (FileManager.default.subpaths(atPath: db + "/lost+found") ?? []).filter { $0.hasSuffix("journal.jsonl") }
        #expect(moved.count == 1)
        print("10 GB journal: notesfs ls peak RSS \(lsRSS) KiB, fsck \(fsckRSS) KiB")
        #expect(lsRSS > 0 && lsRSS < Self.rssLimitKB)
        #expect(fsckRSS > 0 && fsckRSS < Self.rssLimitKB)
    }

    /// Every directory 0700 and every file 0600 under the database.
    func modes(_ db: String) -> [String: mode_t] {
        var result: [String: mode_t] = [:]
        var st = stat()
        if stat(db, &st) == 0 { result["."] = st.st_mode & 0o7777 }
        for relative in FileManager.default.subpaths(atPath: db) ?? [] where lstat(db + "/" + relative, &st) == 0 {
            result[relative] = st.st_mode & 0o7777
        }
        return result
    }

    @Test(arguments: ["022", "000"]) func theDatabaseIsPrivateWhateverTheUmask(_ umask: String) throws {
        let db = makeTemporaryDirectory("umask") + "/db"
        let tree = makeTemporaryDirectory("umask-tree")
        try Data("secret\n".utf8).write(to: URL(fileURLWithPath: tree + "/n.md"))
        try Data("secret bytes".utf8).write(to: URL(fileURLWithPath: tree + "/a.bin"))
        let script =
            "umask \(umask) && \"$0\" --db \"$1\" import \"$2\" && \"$0\" --db \"$1\" note new m --text x && \"$0\" --db \"$1\" fsck"
        let result = try run("/bin/sh", ["-c", script, notesfsBinary, db, tree])
        #expect(result.status == 0, "\(result.stderr)")
        let found = modes(db)
        #expect(found.count > 260)  // 256 record shards and more
        var st = stat()
        for (relative, mode) in found {
            let isDirectory = lstat(db + "/" + relative, &st) == 0 && st.st_mode & S_IFMT == S_IFDIR
            #expect(mode == (isDirectory ? 0o700 : 0o600), "umask \(umask): \(relative) has mode \(String(mode, radix: 8))")
        }
    }

    @Test func looseModesAreReportedAndRepaired() throws {
        let db = try makeSample("loose")
        chmod(db, 0o755)
        chmod(db + "/journal.jsonl", 0o644)
        let fsck = try notesfs(["fsck", "--json"], db: db)
        #expect(fsck.status == 4)
        let json = try parseJSON(fsck.stdout) as? [String: Any]
        let problems = (json?["problems"] as? [[String: Any]]) ?? []
        #expect(problems.compactMap { $0["kind"] as? String } == ["looseMode", "looseMode"])
        #expect(Set(problems.compactMap { $0["path"] as? String }) == [db, db + "/journal.jsonl"])
        let repair = try notesfs(["fsck", "--repair"], db: db)
        #expect(repair.status == 0, "\(repair.out)")
        #expect(modes(db)["."] == 0o700)
        #expect(modes(db)["journal.jsonl"] == 0o600)
    }

    @Test func aFolderCycleIsFoundAndRepairedAndItsNotesStayReachable() throws {
        let db = try makeSample("cycle")
        #expect(try notesfs(["folder", "new", "G", "--parent", "F"], db: db).status == 0)
        #expect(try notesfs(["note", "new", "F/G/inner", "--text", "in G"], db: db).status == 0)
        do {
            let database = try RecordDatabase(path: db, create: false, backgroundThread: false)
            let folders = database.queryMetadata(Query(recordType: "Folder"))
            let f = try #require(folders.first { $0.record["name"] == .string("F") })
            let g = try #require(folders.first { $0.record["name"] == .string("G") })
            var record = try database.record(for: f.recordID)
            record["parent"] = .reference(Reference(recordID: g.recordID, action: .deleteSelf))
            try database.modify(saving: [record])
            try database.close()
        }
        let fsck = try notesfs(["fsck", "--json"], db: db)
        #expect(fsck.status == 4)
        let kinds = ((try parseJSON(fsck.stdout) as? [String: Any])?["problems"] as? [[String: Any]])?.compactMap { $0["kind"] as? String }
        #expect(kinds == ["referenceCycle"])
        let repair = try notesfs(["fsck", "--repair"], db: db)
        #expect(repair.status == 0, "\(repair.out)")
        #expect(repair.out.contains("cleared to break the cycle"))
        // Whichever folder became top-level, both notes are reachable again.
        let top = try notesfs(["ls"], db: db).out
        #expect(top == "F/\n" || top == "G/\n")
        let inner = try notesfs(["note", "cat", top == "F/\n" ? "F/G/inner" : "G/inner"], db: db)
        #expect(inner.out == "in G")
    }

    @Test func assetsAreFreedByNoteRmAndFolderRm() throws {
        let db = try makeSample("collect")
        let tree = makeTemporaryDirectory("collect-tree")
        try FileManager.default.createDirectory(atPath: tree + "/H", withIntermediateDirectories: true)
        try Data(repeating: 7, count: 100_000).write(to: URL(fileURLWithPath: tree + "/H/big.bin"))
        try Data(repeating: 8, count: 1000).write(to: URL(fileURLWithPath: tree + "/H/small.bin"))
        #expect(try notesfs(["import", tree], db: db).status == 0)
        func assetCount() -> Int { (FileManager.default.subpaths(atPath: db + "/assets") ?? []).filter { $0.contains("/") }.count }
        #expect(assetCount() == 3)
        #expect(try notesfs(["note", "rm", "F/blob.bin"], db: db).status == 0)
        // The deleted files' last versions keep their bytes (note history) until they are let
        // go (retention keeps a delete's version for 90 days: here `history rm`).
        #expect(assetCount() == 3)
        #expect(try notesfs(["folder", "rm", "H"], db: db).status == 0)
        #expect(assetCount() == 3)
        let log = try #require(try parseJSON(notesfs(["log", "--json"], db: db).stdout) as? [[String: Any]])
        #expect(try notesfs(["history", "rm"] + log.compactMap { $0["version"] as? String }, db: db).status == 0)
        #expect(assetCount() == 0)
        let fsck = try notesfs(["fsck"], db: db)
        #expect(fsck.status == 0, "\(fsck.out)")
    }

    @Test func aDirectoryThatIsNotADatabaseIsOneError() throws {
        let dir = makeTemporaryDirectory("notdb")
        try Data("thesis".utf8).write(to: URL(fileURLWithPath: dir + "/thesis.tex"))
        for command in [["ls"], ["fsck"], ["fsck", "--repair"], ["note", "new", "x", "--text", "y"]] {
            let result = try notesfs(command, db: dir)
            #expect(result.status == 6, "\(command): \(result.stderr)")
            #expect(result.stderr.contains("not a notesfs database"), "\(command): \(result.stderr)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["thesis.tex"])
    }

    /// Runs `body` with `dir` mounted at a fresh mount point by `options`; records an issue when mounting is not possible.
    func withMount(_ arguments: [String], _ body: (String) throws -> Void) throws {
        let point = makeTemporaryDirectory("mnt")
        let mounted = try run("/usr/bin/mount", arguments + [point])
        guard mounted.status == 0 else {
            Issue.record("mount \(arguments) failed (root is needed): \(mounted.stderr)")
            return
        }
        defer { _ = try? run("/usr/bin/umount", ["-l", point]) }
        try body(point)
    }

    /// `ls`, `note cat` and `fsck` on the sample database at `db` succeed with the sample's contents.
    func expectReadCommandsWork(_ db: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let ls = try notesfs(["ls", "F"], db: db)
        #expect(ls.status == 0, "\(ls.stderr)", sourceLocation: sourceLocation)
        #expect(ls.out == "blob.bin\nn.md\n", sourceLocation: sourceLocation)
        #expect(try notesfs(["note", "cat", "F/n"], db: db).out == Self.text, sourceLocation: sourceLocation)
        let fsck = try notesfs(["fsck"], db: db)
        #expect(fsck.status == 0, "\(fsck.out)\(fsck.stderr)", sourceLocation: sourceLocation)
    }

    @Test(.tags(.mount), .needsFUSE) func readOnlyCommandsWorkOnAReadOnlyBindMount() throws {
        let db = try makeSample("ro")
        try withMount(["--bind", db]) { point in
            let remount = try run("/usr/bin/mount", ["-o", "remount,ro,bind", point])
            #expect(remount.status == 0, "\(remount.stderr)")
            #expect(access(point, W_OK) != 0 && errno == EROFS)
            try expectReadCommandsWork(point)
            #expect(try notesfs(["query", "title == 'n'"], db: point).status == 0)
            let out = makeTemporaryDirectory("ro-export")
            let export = try notesfs(["export", out + "/tree"], db: point)
            #expect(export.status == 0, "\(export.stderr)")
            #expect(try String(contentsOfFile: out + "/tree/F/n.md", encoding: .utf8) == Self.text)
            // Writes fail with one clear error, and change nothing.
            let write = try notesfs(["note", "new", "F/new", "--text", "x"], db: point)
            #expect(write.status == 5)
            #expect(write.stderr.contains("read-only"), "\(write.stderr)")
            let repair = try notesfs(["fsck", "--repair"], db: point)
            #expect(repair.status == 5)
            #expect(repair.stderr.contains("read-only"), "\(repair.stderr)")
        }
        #expect(try notesfs(["ls", "F"], db: db).out == "blob.bin\nn.md\n")
    }

    @Test(.tags(.mount), .needsFUSE) func readOnlyCommandsWorkOnAFullDisk() throws {
        try withMount(["-t", "tmpfs", "-o", "size=1M", "tmpfs"]) { point in
            let db = try makeSample("full", base: point)
            // Fill the disk.
            let fill = try run("/bin/dd", ["if=/dev/zero", "of=\(point)/fill", "bs=64k"])
            #expect(fill.status != 0 && fill.stderr.contains("No space left"))
            try expectReadCommandsWork(db)
            let write = try notesfs(["note", "new", "F/big"], db: db, stdin: Data(repeating: 0x78, count: 2_000_000))
            #expect(write.status == 5)
            #expect(write.stderr.contains("No space left on device"), "\(write.stderr)")
            try FileManager.default.removeItem(atPath: point + "/fill")
            // The failed write left the database consistent.
            let after = try notesfs(["fsck"], db: db)
            #expect(after.status == 0, "\(after.out)\(after.stderr)")
        }
    }
}
