import Foundation
import Synchronization
import TestSupport
import Testing

@testable import RecordStore

/// A commit that takes the journal past the threshold checkpoints: the records the journal
/// changed are written into the metadata index file, a new journal starts at that commit, and
/// every way it can end leaves a database that opens to every commit.
@Suite struct CheckpointTests {
    /// A database of a folder and 1,500 small notes.
    static func database(at path: String = makeTemporaryDirectory()) throws -> RecordDatabase {
        let db = try makeDatabase(path)
        try db.modify(saving: [folder("f")] + (0..<1500).map { note("n\($0)", folder: "f", text: "small \($0)") })
        return db
    }

    /// Two notes of 1 MiB: their commit takes the journal past ``RecordDatabase/checkpointMinimum``.
    static func commitOverTheThreshold(_ db: RecordDatabase, named prefix: String = "big") throws -> UInt64 {
        let big = String(repeating: "x", count: 1 << 20)
        try db.modify(saving: (0..<2).map { note("\(prefix)\($0)", folder: "f", text: big) })
        return db.state.withLock { $0.index.seq }
    }

    static func journalHeader(_ db: RecordDatabase) throws -> (generation: UInt64, baseSeq: UInt64) {
        let journal = try JournalFile(path: db.layout.journal, writable: false)
        defer { journal.close() }
        return (journal.generation, journal.baseSeq)
    }

    /// Every record's metadata by name.
    static func everything(_ db: RecordDatabase) -> [String: RecordMetadata] {
        Dictionary(uniqueKeysWithValues: db.metadata { _ in true }.map { ($0.recordID.recordName, $0) })
    }

    static func title(_ metadata: RecordMetadata?) -> String? {
        if case .string(let title)? = metadata?.field("title") { return title }
        return nil
    }

    /// The index file's header, read by a connection of its own.
    static func indexHeader(_ db: RecordDatabase) throws -> MetadataIndexFile.Header {
        let (file, reason) = MetadataIndexFile.open(path: db.layout.metadataIndex, databaseID: db.databaseID, writable: false)
        return try #require(file?.header, "\(reason ?? "")")
    }

    @Test func theIndexFileHoldsTheCheckpointAndTheNewJournalStartsThere() throws {
        let db = try Self.database()
        let follower = try makeDatabase(db.path)
        let resets = Mutex(0)
        _ = follower.addObserver { change in if change.isReset { resets.withLock { $0 += 1 } } }
        try db.modify(deleting: [RecordID(recordName: "n1498")])
        let before = try Self.journalHeader(db)
        let start = try Self.commitOverTheThreshold(db)

        #expect(try Self.journalHeader(db) == (before.generation + 1, start))
        let header = try Self.indexHeader(db)
        #expect(header.seq == start && header.count == 1 + 1500 - 1 + 2)
        #expect(db.state.withLock { $0.index.entries.overlay.isEmpty && $0.index.entries.shadowedInBase.isEmpty })
        #expect(try FileManager.default.contentsOfDirectory(atPath: db.layout.temp).isEmpty)
        // Commits after it go to the new journal, over the index file.
        var n0 = try db.record(for: RecordID(recordName: "n0"))
        n0["title"] = .string("changed")
        try db.modify(saving: [n0])
        try db.modify(deleting: [RecordID(recordName: "n1")])

        let live = Self.everything(db)
        #expect(Self.title(live["n0"]) == "changed" && live["n1"] == nil && live["n1498"] == nil && live["big0"] != nil)
        #expect(live.count == 1 + 1500 - 2 + 2 && db.recordCount == live.count)
        // Another instance reads the old journal to its end, then the index file under the new one.
        try follower.refresh()
        #expect(Self.everything(follower) == live)
        #expect(resets.withLock { $0 } == 0)
        #expect(follower.state.withLock { $0.journal.generation } == before.generation + 1)
        // Opened afresh: the index file and the new journal give every commit.
        let reopened = try makeDatabase(db.path)
        #expect(Self.everything(reopened) == live)
        #expect(reopened.recordCount == live.count)
        // Change tokens from before the checkpoint still answer, from the index file's tombstones.
        let changes = try reopened.changes(since: ChangeToken(databaseID: db.databaseID, seq: before.baseSeq))
        #expect(Set(changes.deleted.map(\.recordName)) == ["n1498", "n1"])
    }

    @Test func anInstanceThatFellBehindTwoCheckpointsIsReset() throws {
        let db = try Self.database()
        let follower = try RecordDatabase(path: db.path, backgroundThread: false)
        let resets = Mutex(0)
        _ = follower.addObserver { change in if change.isReset { resets.withLock { $0 += 1 } } }
        _ = try Self.commitOverTheThreshold(db)
        try db.modify(deleting: [RecordID(recordName: "n7")])
        _ = try Self.commitOverTheThreshold(db, named: "again")
        try follower.refresh()
        #expect(resets.withLock { $0 } == 1)
        #expect(Self.everything(follower) == Self.everything(db))
        #expect(follower.metadata(for: RecordID(recordName: "n7")) == nil)
    }

    @Test func laggingFilesOfPartialRecordsAreRewrittenByTheCheckpoint() throws {
        let db = try Self.database()
        let long = String(repeating: "a line of the note's text\n", count: 200)
        let names = ["p0", "p1"]
        try db.modify(saving: names.map { note($0, folder: "f", text: long) })
        func rename(_ name: String, to title: String) throws {
            var partial = try #require(db.metadata(for: RecordID(recordName: name))).record
            partial["title"] = .string(title)
            try db.modify(saving: [partial])
        }
        func file(_ name: String) throws -> String {
            try String(contentsOfFile: db.layout.recordPath(name), encoding: .utf8)
        }
        // Renamed through their partial records: their files lag.
        for name in names { try rename(name, to: "renamed \(name)") }
        #expect(db.state.withLock { $0.index.staleRecordFiles } == Set(names))
        #expect(try !file("p0").contains("renamed p0"))
        _ = try Self.commitOverTheThreshold(db)

        #expect(try file("p0").contains("renamed p0") && file("p0").contains("a line of the note"))
        #expect(db.state.withLock { $0.index.staleRecordFiles }.isEmpty)
        for reader in [db, try makeDatabase(db.path)] {
            let p0 = try reader.record(for: RecordID(recordName: "p0"))
            #expect(p0["title"] == "renamed p0" && p0["text"] == .string(long))
        }
        #expect(try db.check().problems.isEmpty)
    }

    /// Runs a program by path; its exit status.
    static func run(_ path: String, _ arguments: String...) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }

    @Test(.tags(.mount), .notInFastRuns) func aCheckpointThatFindsTheDiskFullChangesNothingAndWaitsBeforeTheNext() throws {
        let point = makeTemporaryDirectory("full")
        defer { rmdir(point) }
        try #require(try Self.run("/bin/mount", "-t", "tmpfs", "-o", "size=48m", "tmpfs", point) == 0)
        defer {
            // Retried, then detached lazily: an instance released on another thread may still hold a file.
            var unmounted = false
            for _ in 0..<50 where !unmounted {
                unmounted = (try? Self.run("/bin/umount", point)) == 0
                if !unmounted { usleep(100_000) }
            }
            if !unmounted { _ = try? Self.run("/bin/umount", "-l", point) }
        }
        let db = try Self.database(at: point + "/db")
        let before = try Self.journalHeader(db)
        // The journal just under the threshold.
        let size = db.state.withLock { $0.journal.size }
        try db.modify(saving: [
            note("under", folder: "f", text: String(repeating: "u", count: RecordDatabase.checkpointMinimum - size - (64 << 10)))
        ])
        // Fill the disk, then free room for the next commit's journal line and record file only.
        let fill = point + "/fill"
        let fd = open(fill, O_WRONLY | O_CREAT, 0o600)
        try #require(fd >= 0)
        let zeros = [UInt8](repeating: 0, count: 1 << 16)
        while write(fd, zeros, zeros.count) > 0 {}
        #expect(errno == ENOSPC)
        try #require(ftruncate(fd, lseek(fd, 0, SEEK_END) - (600 << 10)) == 0)
        close(fd)
        // The commit that takes the journal over succeeds (notes before indexes); its checkpoint does not.
        try db.modify(saving: [note("over", folder: "f", text: String(repeating: "o", count: 200 << 10))])
        #expect(db.recentProblems.contains { $0.hasPrefix("checkpoint:") }, "\(db.recentProblems)")
        #expect(try Self.journalHeader(db) == before)
        #expect(try Self.indexHeader(db).seq == before.baseSeq)
        let live = Self.everything(db)
        #expect(live.count == 1 + 1500 + 2 && live["over"] != nil)
        #expect(Self.everything(try makeDatabase(db.path)) == live)
        #expect(try db.record(for: RecordID(recordName: "over"))["text"] == .string(String(repeating: "o", count: 200 << 10)))

        // Room again: the next commit over the threshold checkpoints.
        try #require(unlink(fill) == 0)
        let start = try Self.commitOverTheThreshold(db, named: "again")
        #expect(try Self.journalHeader(db).baseSeq == start)
        #expect(try Self.indexHeader(db).seq == start)
        #expect(Self.everything(try makeDatabase(db.path)) == Self.everything(db))
        #expect(try db.check().problems.isEmpty)
    }

    /// 40 notes of 2 KiB, one commit each: a journal over ``RecordDatabase/quietCheckpointMinimum``
    /// and under ``RecordDatabase/checkpointMinimum``. Returns the last commit.
    static func commitALongJournal(_ db: RecordDatabase) throws -> UInt64 {
        try db.modify(saving: [folder("f")])
        let text = String(repeating: "y", count: 2048)
        for i in 0..<40 { try db.modify(saving: [note("long\(i)", folder: "f", text: text)]) }
        return db.state.withLock { $0.index.seq }
    }

    static func journalSize(_ db: RecordDatabase) throws -> Int {
        try #require(FileManager.default.attributesOfItem(atPath: db.layout.journal)[.size] as? Int)
    }

    /// Every open replays the journal: a process that committed leaves it short at close, one
    /// that only read leaves it as it was.
    @Test func aWriterLeavesAShortJournalAtClose() throws {
        let db = try makeDatabase()
        let last = try Self.commitALongJournal(db)
        let long = try Self.journalSize(db)
        #expect(long > RecordDatabase.quietCheckpointMinimum && long < RecordDatabase.checkpointMinimum)
        let before = try Self.journalHeader(db)

        let reader = try makeDatabase(db.path)
        #expect(reader.recordCount == 41)
        try reader.close()
        #expect(try Self.journalSize(db) == long)
        #expect(try Self.journalHeader(db) == before)

        let live = Self.everything(db)
        try db.close()
        #expect(try Self.journalHeader(db) == (before.generation + 1, last))
        #expect(try Self.journalSize(db) < 1024)
        #expect(try Self.indexHeader(db).seq == last)
        #expect(Self.everything(try makeDatabase(db.path)) == live)
    }

    /// The mount's database (a background thread) checkpoints a long journal once no line has
    /// been added for a while, without closing.
    @Test func aQuietLongJournalIsCheckpointedInTheBackground() throws {
        let path = makeTemporaryDirectory()
        let db = try RecordDatabase(path: path, backgroundThread: true)
        defer { try? db.close() }
        let before = try Self.journalHeader(db)
        let last = try Self.commitALongJournal(db)
        #expect(eventually { (try? Self.journalHeader(db)) ?? before == (before.generation + 1, last) })
        #expect(try Self.journalSize(db) < 1024)
        #expect(db.state.withLock { $0.index.entries.overlay.isEmpty })
        #expect(Self.everything(try makeDatabase(path)) == Self.everything(db))
    }
}
