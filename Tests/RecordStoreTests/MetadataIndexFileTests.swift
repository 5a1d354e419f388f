import Foundation
import TestSupport
import Testing

@testable import RecordStore

/// The metadata index file (`indexes/records.sqlite`) is derived: whatever state it is found in
/// (missing, garbage, cut short, of another format, another database's, behind or ahead of the
/// journal) the database opens to every commit, with the file rebuilt; and a database of a
/// version before it (an `index.jsonl` snapshot) is read by this one.
@Suite struct MetadataIndexFileTests {
    /// A database of folders and notes, checkpointed, with commits after the checkpoint.
    static func database(_ label: String) throws -> (path: String, live: [String: RecordMetadata]) {
        let path = makeTemporaryDirectory(label)
        let db = try makeDatabase(path)
        try db.modify(saving: (0..<3).map { folder("f\($0)") })
        try db.modify(saving: (0..<300).map { note("n\($0)", folder: "f\($0 % 3)", text: "text \($0) é") })
        try db.modify(deleting: [RecordID(recordName: "n5")])
        try db.checkpoint()
        var n7 = try db.record(for: RecordID(recordName: "n7"))
        n7["title"] = .string("after the checkpoint")
        try db.modify(saving: [n7, note("new", folder: "f1", text: "new")], deleting: [RecordID(recordName: "n8")])
        let live = everything(db)
        try db.close()
        return (path, live)
    }

    static func everything(_ db: RecordDatabase) -> [String: RecordMetadata] {
        Dictionary(uniqueKeysWithValues: db.metadata { _ in true }.map { ($0.recordID.recordName, $0) })
    }

    static func indexPath(_ path: String) -> String { path + "/indexes/records.sqlite" }

    /// Opens the database and checks that it reads `live` and that its index file is whole again.
    static func expectOpens(_ path: String, to live: [String: RecordMetadata]) throws {
        let db = try makeDatabase(path)
        defer { try? db.close() }
        #expect(everything(db) == live)
        #expect(db.recordCount == live.count)
        #expect(
            db.referrers(to: RecordID(recordName: "f1"), key: "folder").count
                == live.values.count { $0.field("folder")?.referenceValue?.recordID.recordName == "f1" })
        #expect(try db.check().problems.isEmpty)
        try db.checkpoint()
        let reopened = try makeDatabase(path)
        #expect(everything(reopened) == live)
        #expect(reopened.state.withLock { $0.index.entries.base?.header.count } == live.count)
    }

    /// A record of one name in one folder is found by that name, whatever the folder holds: the
    /// query looks each holder's references up by its name, not through every reference to the
    /// folder (which SQLite chose once the folder's index covered the query: a step per note of
    /// the folder for each lookup).
    @Test func aNameInAFolderIsFoundWithoutReadingTheFolder() throws {
        let path = makeTemporaryDirectory("index-namesake")
        let db = try makeDatabase(path)
        defer { try? db.close() }
        try db.modify(saving: [folder("f")])
        try db.modify(saving: (0..<3000).map { note("n\($0)", folder: "f", text: "text \($0)") })
        try db.checkpoint()
        func steps() -> Int { db.state.withLock { $0.index.entries.base?.stepsRun } ?? -1 }
        let before = steps()
        let found = db.metadata(
            ofType: "Note", whereField: "title", equals: "n7", referringTo: RecordID(recordName: "f"), through: "folder")
        #expect(found.map(\.recordID.recordName) == ["n7"])
        #expect(steps() - before < 300, "steps: \(steps() - before)")
    }

    /// A folder's records read twice in a row (a query's hits, then the listing that names them)
    /// run the join once; commits after the checkpoint are seen over it, and a checkpoint reads
    /// the folder anew.
    @Test func aFolderReadTwiceRunsTheJoinOnce() throws {
        let db = try makeDatabase(makeTemporaryDirectory("index-twice"))
        defer { try? db.close() }
        let f = RecordID(recordName: "f")
        try db.modify(saving: [folder("f")] + (0..<500).map { note("n\($0)", folder: "f") })
        try db.checkpoint()
        func steps() -> Int { db.state.withLock { $0.index.entries.base?.stepsRun } ?? -1 }
        func names() -> Set<String> { Set(db.referrers(to: f, key: "folder").map(\.recordID.recordName)) }
        let first = names()
        let once = steps()
        #expect(first.count == 500)
        #expect(names() == first)
        #expect(steps() == once, "the join ran again: \(steps() - once) steps")
        try db.modify(deleting: [RecordID(recordName: "n1")])
        #expect(names() == first.subtracting(["n1"]))
        try db.modify(saving: [note("m", folder: "f")])
        try db.checkpoint()
        #expect(names() == first.subtracting(["n1"]).union(["m"]))
        #expect(steps() > once)
    }

    /// A record read from the file is decoded once while the file's content stays (the mount asks
    /// for the same nodes' attributes at every `ls -l`), and read anew once a checkpoint changed it;
    /// a change after the checkpoint is read from memory, whatever the file held.
    @Test func recordsReadFromTheFileAreDecodedOncePerCheckpoint() throws {
        let (path, _) = try Self.database("index-cache")
        let db = try makeDatabase(path)
        defer { try? db.close() }
        func decoded() -> Int { db.state.withLock { $0.index.entries.base?.rowsDecoded } ?? -1 }
        let n1 = RecordID(recordName: "n1")
        let f1 = RecordID(recordName: "f1")
        let start = decoded()
        #expect(db.metadata(for: n1)?.field("title")?.stringValue == "n1")
        let listing = db.referrers(to: f1, key: "folder").map(\.recordID.recordName).sorted()
        #expect(listing.count == 101)
        let once = decoded()
        #expect(once > start)
        for _ in 0..<3 {
            #expect(db.metadata(for: n1)?.field("title")?.stringValue == "n1")
            #expect(db.referrers(to: f1, key: "folder").map(\.recordID.recordName).sorted() == listing)
        }
        #expect(decoded() == once, "read again: \(decoded() - once) rows")
        var record = try db.record(for: n1)
        record["title"] = .string("renamed")
        try db.modify(saving: [record])
        #expect(db.metadata(for: n1)?.field("title")?.stringValue == "renamed")
        try db.checkpoint()
        // A checkpoint of this process's own commit forgets only what it wrote: the folder's other
        // entries are not decoded again (those the checkpoint wrote are: the renamed one, and the
        // commits made after the first checkpoint), and the renamed one reads as renamed.
        let afterCheckpoint = decoded()
        #expect(db.metadata(for: n1)?.field("title")?.stringValue == "renamed")
        #expect(db.referrers(to: f1, key: "folder").map(\.recordID.recordName).sorted() == listing)
        #expect(decoded() - afterCheckpoint < 10, "decoded again: \(decoded() - afterCheckpoint) rows")

        // Another process's checkpoint: everything decoded is forgotten, and its change is seen.
        #expect(db.metadata(for: RecordID(recordName: "n2"))?.field("title")?.stringValue == "n2")
        let other = try makeDatabase(path)
        var again = try other.record(for: RecordID(recordName: "n2"))
        again["title"] = .string("changed elsewhere")
        try other.modify(saving: [again])
        try other.checkpoint()
        try other.close()
        var touched = try db.record(for: n1)
        touched["title"] = .string("renamed twice")
        try db.modify(saving: [touched])
        try db.checkpoint()
        #expect(db.metadata(for: RecordID(recordName: "n2"))?.field("title")?.stringValue == "changed elsewhere")
        #expect(db.metadata(for: n1)?.field("title")?.stringValue == "renamed twice")
    }

    /// The names of a type's records are those of its metadata: the file's rows the journal did not
    /// change or delete since the checkpoint, and the records it saved since, each once.
    @Test func recordNamesOfATypeSeeTheCommitsAfterTheCheckpoint() throws {
        let (path, live) = try Self.database("index-names")
        let db = try makeDatabase(path)
        defer { try? db.close() }
        for type in ["Note", "Folder", "Attachment"] {
            let names = db.recordNames(ofType: type)
            #expect(names.count == Set(names).count)
            #expect(Set(names) == Set(live.values.filter { $0.recordType == type }.map(\.recordID.recordName)))
        }
        #expect(db.recordNames(ofType: "Note").contains("new") && !db.recordNames(ofType: "Note").contains("n8"))
    }

    @Test func aMissingIndexFileIsRebuilt() throws {
        let (path, live) = try Self.database("index-missing")
        for suffix in ["", "-wal", "-shm"] { unlink(Self.indexPath(path) + suffix) }
        try Self.expectOpens(path, to: live)
    }

    @Test func aGarbageIndexFileIsRebuilt() throws {
        let (path, live) = try Self.database("index-garbage")
        try Data((0..<(256 << 10)).map { UInt8(truncatingIfNeeded: $0 &* 7919 >> 3) }).write(to: URL(fileURLWithPath: Self.indexPath(path)))
        try Self.expectOpens(path, to: live)
    }

    @Test func aTruncatedIndexFileIsRebuilt() throws {
        let (path, live) = try Self.database("index-truncated")
        // Every page in the file itself (its log copied in and emptied), then the file cut short.
        try Self.sqlite(Self.indexPath(path), "PRAGMA wal_checkpoint(TRUNCATE)")
        var st = stat()
        try #require(stat(Self.indexPath(path), &st) == 0 && st.st_size > 8192)
        try #require(truncate(Self.indexPath(path), 4 * 4096) == 0)  // the header pages only
        // Found at open when the pages of the header's table are gone; else SQLite finds a missing
        // page when a read meets it: that read marks the file damaged, and the next refresh (the
        // background thread's, 4 times a second) builds it again.
        let reader = try makeDatabase(path)
        let first = Self.everything(reader)
        let foundWhenRead = reader.state.withLock { $0.index.entries.base?.isDamaged } == true
        #expect(foundWhenRead || first == live)
        try reader.refresh()
        #expect(Self.everything(reader) == live)
        #expect(reader.state.withLock { $0.index.entries.base?.header.count } == live.count)  // built again
        try Self.expectOpens(path, to: live)
    }

    @Test func anIndexFileOfAnotherFormatIsRebuilt() throws {
        let (path, live) = try Self.database("index-format")
        try Self.sqlite(Self.indexPath(path), "UPDATE meta SET value = 0 WHERE key = 'format'")
        try Self.expectOpens(path, to: live)
    }

    @Test func anotherDatabasesIndexFileIsRebuilt() throws {
        let (path, live) = try Self.database("index-foreign")
        let (other, _) = try Self.database("index-foreign-other")
        for suffix in ["-wal", "-shm"] { unlink(Self.indexPath(path) + suffix) }
        try FileManager.default.removeItem(atPath: Self.indexPath(path))
        try FileManager.default.copyItem(atPath: Self.indexPath(other), toPath: Self.indexPath(path))
        try Self.expectOpens(path, to: live)
    }

    @Test func anIndexFileBehindTheJournalIsRebuilt() throws {
        let path = makeTemporaryDirectory("index-behind")
        let db = try makeDatabase(path)
        try db.modify(saving: [folder("f1"), note("a", folder: "f1")])
        try db.checkpoint()
        let old = try Data(contentsOf: URL(fileURLWithPath: Self.indexPath(path)))
        try db.modify(saving: [note("b", folder: "f1")], deleting: [RecordID(recordName: "a")])
        try db.checkpoint()
        try db.modify(saving: [note("c", folder: "f1")])
        let live = Self.everything(db)
        try db.close()
        for suffix in ["-wal", "-shm"] { unlink(Self.indexPath(path) + suffix) }
        try old.write(to: URL(fileURLWithPath: Self.indexPath(path)))
        try Self.expectOpens(path, to: live)
    }

    @Test func anIndexFileAheadOfTheJournalIsRebuilt() throws {
        let path = makeTemporaryDirectory("index-ahead")
        let db = try makeDatabase(path)
        try db.modify(saving: [folder("f1"), note("a", folder: "f1")])
        try db.checkpoint()
        try db.close()
        // A copy of the database as it is now; the original goes on past another checkpoint.
        let copy = makeTemporaryDirectory("index-ahead-copy")
        try FileManager.default.removeItem(atPath: copy)
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        let copyLive = Self.everything(try makeDatabase(copy))
        let later = try makeDatabase(path)
        try later.modify(saving: [note("b", folder: "f1")], deleting: [RecordID(recordName: "a")])
        try later.checkpoint()
        try later.close()
        // The copy gets the later index file: it holds commits its journal does not.
        for suffix in ["", "-wal", "-shm"] { unlink(Self.indexPath(copy) + suffix) }
        try FileManager.default.copyItem(atPath: Self.indexPath(path), toPath: Self.indexPath(copy))
        try Self.expectOpens(copy, to: copyLive)
    }

    @Test func aDatabaseOfAVersionBeforeTheIndexFileIsReadFromItsSnapshot() throws {
        let path = makeTemporaryDirectory("index-migration")
        let db = try makeDatabase(path)
        try db.modify(saving: [folder("f1"), note("a", folder: "f1", text: "a"), note("b", folder: "f1")])
        try db.modify(deleting: [RecordID(recordName: "b")])
        try db.checkpoint()
        // As the older version left it: its snapshot at the journal's base, no index file, format 2.
        let index = db.state.withLock { $0.index }
        _ = try Snapshot.write(index, generation: 1, to: db.layout.snapshot, temp: db.layout.temp + "/snapshot")
        try db.modify(saving: [note("c", folder: "f1", text: "after the snapshot")])
        let live = Self.everything(db)
        let token = ChangeToken(databaseID: db.databaseID, seq: 1)
        try db.close()
        for suffix in ["", "-wal", "-shm"] { unlink(Self.indexPath(path) + suffix) }
        try Data(#"{"format":2,"databaseID":"\#(db.databaseID)"}"#.utf8).write(to: URL(fileURLWithPath: path + "/notesfs.json"))

        let migrated = try makeDatabase(path)
        #expect(Self.everything(migrated) == live)
        #expect(try migrated.changes(since: token).deleted == [RecordID(recordName: "b")])
        #expect(!FileManager.default.fileExists(atPath: path + "/index.jsonl"))
        #expect(try String(contentsOfFile: path + "/notesfs.json", encoding: .utf8).contains(#""format":3"#))
        #expect(migrated.state.withLock { $0.index.entries.base?.header.count } == 2)
        #expect(try migrated.check().problems.isEmpty)
    }

    /// Runs SQL on an SQLite file with the `sqlite3` program.
    static func sqlite(_ file: String, _ sql: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = [file, sql]
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0)
    }
}

/// Values the index file holds are input like any file's: a forged count or tombstone reaches no trap.
@Suite struct ForgedIndexFileTests {
    @Test func aForgedCountAndTombstoneAreNoTrap() throws {
        let path = makeTemporaryDirectory("index-forged")
        let db = try makeDatabase(path)
        try db.modify(saving: [folder("f"), note("a", folder: "f"), note("b", folder: "f")])
        let token = db.currentToken
        try db.checkpoint()
        try db.close()
        let file = MetadataIndexFileTests.indexPath(path)
        try MetadataIndexFileTests.sqlite(
            file, "UPDATE meta SET value = 0 WHERE key = 'count'; INSERT INTO tombstones VALUES (-5, 'x', 'Note')")
        let reopened = try makeDatabase(path)
        try reopened.modify(deleting: [RecordID(recordName: "a")])
        #expect(reopened.recordCount >= 0)
        #expect(Set(reopened.metadata { _ in true }.map(\.recordID.recordName)) == ["f", "b"])
        #expect(try reopened.changes(since: token).deleted == [RecordID(recordName: "a")])
    }

    /// A folder's members are read by the row number each reference keeps: a forged one (another
    /// record's row, or none) does not list the wrong record; the right one is found by name, and
    /// the file is rebuilt.
    @Test func aForgedRowNumberListsTheRightRecords() throws {
        let path = makeTemporaryDirectory("index-forged-row")
        let db = try makeDatabase(path)
        try db.modify(saving: [folder("f"), folder("g"), note("a", folder: "f"), note("b", folder: "f"), note("c", folder: "g")])
        try db.checkpoint()
        try db.close()
        let file = MetadataIndexFileTests.indexPath(path)
        try MetadataIndexFileTests.sqlite(
            file,
            """
            UPDATE refs SET srow = (SELECT rowid FROM records WHERE name = 'c') WHERE source = 'a';
            UPDATE refs SET srow = 1000000 WHERE source = 'b'
            """)
        let reopened = try makeDatabase(path)
        defer { try? reopened.close() }
        let f = RecordID(recordName: "f")
        #expect(Set(reopened.referrers(to: f, key: "folder").map(\.recordID.recordName)) == ["a", "b"])
        #expect(reopened.state.withLock { $0.index.entries.base?.isDamaged } == true)
        try reopened.refresh()  // rebuilt
        #expect(reopened.state.withLock { $0.index.entries.base?.isDamaged } == false)
        #expect(Set(reopened.referrers(to: f, key: "folder").map(\.recordID.recordName)) == ["a", "b"])
        #expect(Set(reopened.referrers(to: RecordID(recordName: "g"), key: "folder").map(\.recordID.recordName)) == ["c"])
    }

    /// fsck reads the references table whole: a forged row number is reported; a repair builds
    /// the file again, and so does the next refresh after a check without one.
    @Test(arguments: [false, true])
    func fsckFindsAForgedRowNumber(repair: Bool) throws {
        let path = makeTemporaryDirectory("index-audit")
        let db = try makeDatabase(path)
        try db.modify(saving: [folder("f"), folder("g"), note("a", folder: "f"), note("b", folder: "g")])
        try db.checkpoint()
        #expect(try db.check().problems.isEmpty)
        try db.close()
        try MetadataIndexFileTests.sqlite(
            MetadataIndexFileTests.indexPath(path), "UPDATE refs SET srow = (SELECT rowid FROM records WHERE name = 'b') WHERE source = 'a'"
        )
        let reopened = try makeDatabase(path)
        defer { try? reopened.close() }
        let report = try reopened.check(repair: repair)
        #expect(report.problems.count == 1)
        guard case .damagedIndex(let file, let reason) = report.problems.first else {
            Issue.record("expected a damaged index, got \(report.problems)")
            return
        }
        #expect(file == MetadataIndexFileTests.indexPath(path) && reason.contains("1 references"))
        #expect(report.repaired.contains { $0.contains("rebuilt") } == repair)
        #expect(try reopened.check().problems.isEmpty)
        #expect(reopened.referrers(to: RecordID(recordName: "f"), key: "folder").map(\.recordID.recordName) == ["a"])
    }
}
