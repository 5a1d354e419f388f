import Foundation
import Synchronization
import TestSupport
import Testing

@testable import RecordStore

/// A commit that takes the journal past the threshold starts a checkpoint on another thread: the
/// snapshot holds the index as of that commit, the commits made meanwhile are carried into the new
/// journal, and every way it can end leaves a database that opens to every commit.
@Suite struct BackgroundCheckpointTests {
    /// A database of a folder and 1,500 small notes (more than one slice of the checkpoint).
    static func database(at path: String = makeTemporaryDirectory()) throws -> RecordDatabase {
        let db = try makeDatabase(path)
        try db.modify(saving: [folder("f")] + (0..<1500).map { note("n\($0)", folder: "f", text: "small \($0)") })
        return db
    }

    /// Five notes of 1 MiB: their commit takes the journal past ``RecordDatabase/checkpointMinimum``.
    static func commitOverTheThreshold(_ db: RecordDatabase, named prefix: String = "big") throws -> UInt64 {
        let big = String(repeating: "x", count: 1 << 20)
        try db.modify(saving: (0..<5).map { note("\(prefix)\($0)", folder: "f", text: big) })
        return db.state.withLock { $0.index.seq }
    }

    /// Pauses `db`'s next background checkpoint after its first slice until the returned gate opens.
    static func pauseCheckpoint(_ db: RecordDatabase) -> (paused: DispatchSemaphore, resume: DispatchSemaphore) {
        let paused = DispatchSemaphore(value: 0)
        let resume = DispatchSemaphore(value: 0)
        db.checkpointPause.withLock {
            $0 = {
                paused.signal()
                resume.wait()
            }
        }
        return (paused, resume)
    }

    static func journalHeader(_ db: RecordDatabase) throws -> (generation: UInt64, baseSeq: UInt64) {
        let journal = try JournalFile(path: db.layout.journal, writable: false)
        defer { journal.close() }
        return (journal.generation, journal.baseSeq)
    }

    static func journalSeqs(_ db: RecordDatabase) throws -> [UInt64] {
        var journal = try JournalFile(path: db.layout.journal, writable: false)
        defer { journal.close() }
        var seqs: [UInt64] = []
        #expect(try journal.readEntries { seqs.append($0.seq) } == nil)
        return seqs
    }

    /// Every record's metadata by name.
    static func everything(_ db: RecordDatabase) -> [String: RecordMetadata] {
        Dictionary(uniqueKeysWithValues: db.metadata { _ in true }.map { ($0.recordID.recordName, $0) })
    }

    static func title(_ metadata: RecordMetadata?) -> String? {
        if case .string(let title)? = metadata?.field("title") { return title }
        return nil
    }

    /// Commits of every kind while the checkpoint is paused: a note already written to the
    /// snapshot and one not yet written are changed, one is deleted, one is deleted and made
    /// again, and one is new. Returns how many commits were made.
    static func commitMeanwhile(_ db: RecordDatabase) throws -> Int {
        for name in ["n0", "n1499"] {
            var record = try #require(try db.records(for: [RecordID(recordName: name)])[RecordID(recordName: name)]?.get())
            record["title"] = .string("changed")
            try db.modify(saving: [record])
        }
        try db.modify(deleting: [RecordID(recordName: "n1498")])
        try db.modify(deleting: [RecordID(recordName: "n1497")])
        try db.modify(saving: [note("n1497", folder: "f", text: "again")])
        try db.modify(saving: [note("new", folder: "f", text: "new")])
        return 6
    }

    @Test func theSnapshotHoldsTheStartAndTheNewJournalTheCommitsMadeMeanwhile() throws {
        let db = try Self.database()
        let follower = try makeDatabase(db.path)
        let resets = Mutex(0)
        _ = follower.addObserver { change in if change.isReset { resets.withLock { $0 += 1 } } }
        let gate = Self.pauseCheckpoint(db)
        let before = try Self.journalHeader(db)
        let start = try Self.commitOverTheThreshold(db)
        #expect(gate.paused.wait(timeout: .now() + 60) == .success)
        #expect(try Self.journalHeader(db).generation == before.generation)  // nothing replaced yet
        let meanwhile = try Self.commitMeanwhile(db)
        // A crash after the snapshot's rename and before the journal's leaves this journal beside it.
        let oldJournal = try Data(contentsOf: URL(fileURLWithPath: db.layout.journal))
        gate.resume.signal()
        db.waitForCheckpoint()

        #expect(try Self.journalHeader(db) == (before.generation + 1, start))
        #expect(try Self.journalSeqs(db) == Array(start + 1...start + UInt64(meanwhile)))
        let (snapshot, header, _) = try #require(try Snapshot.load(from: db.layout.snapshot))
        #expect(header.seq == start)
        #expect(snapshot.entries.count == 1 + 1500 + 5)
        #expect(Self.title(snapshot.entries["n0"]) == "n0")
        #expect(Self.title(snapshot.entries["n1499"]) == "n1499")
        #expect(snapshot.entries["n1498"] != nil)
        for name in ["n1497", "n1499"] { #expect((snapshot.entries[name]?.seq ?? .max) < start, "\(name)") }
        #expect(snapshot.entries["new"] == nil)
        #expect(snapshot.tombstones.isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: db.layout.temp).isEmpty)

        let live = Self.everything(db)
        #expect(Self.title(live["n1499"]) == "changed" && live["n1498"] == nil && live["new"] != nil)
        // Another instance follows the new journal from where it was, without reloading.
        try follower.refresh()
        #expect(Self.everything(follower) == live)
        #expect(resets.withLock { $0 } == 0)
        #expect(follower.state.withLock { $0.journal.generation } == before.generation + 1)
        // Opened afresh: the snapshot and the carried lines give every commit.
        #expect(Self.everything(try makeDatabase(db.path)) == live)

        // Opened after a crash between the two renames: the old journal's lines after the snapshot's.
        try db.close()
        try follower.close()
        try oldJournal.write(to: URL(fileURLWithPath: db.layout.journal))
        let recovered = try makeDatabase(db.path)
        #expect(Self.everything(recovered) == live)
        #expect(recovered.state.withLock { $0.index.seq } == start + UInt64(meanwhile))
    }

    @Test func aCheckpointByAnotherInstanceFirstWinsAndTheBackgroundOneLeavesNothing() throws {
        let db = try Self.database()
        let other = try makeDatabase(db.path)
        let gate = Self.pauseCheckpoint(db)
        let before = try Self.journalHeader(db)
        _ = try Self.commitOverTheThreshold(db)
        #expect(gate.paused.wait(timeout: .now() + 60) == .success)
        _ = try Self.commitMeanwhile(db)
        try other.modify(saving: [note("other", folder: "f")])
        try other.checkpoint()
        let otherSeq = other.state.withLock { $0.index.seq }
        gate.resume.signal()
        db.waitForCheckpoint()

        #expect(try Self.journalHeader(db) == (before.generation + 1, otherSeq))
        #expect(try Snapshot.load(from: db.layout.snapshot)?.1.seq == otherSeq)
        #expect(try FileManager.default.contentsOfDirectory(atPath: db.layout.temp).isEmpty)
        #expect(db.state.withLock { $0.checkpoint == nil })
        try db.refresh()
        let live = Self.everything(db)
        #expect(live["other"] != nil && Self.title(live["n1499"]) == "changed")
        #expect(Self.everything(other) == live)
        #expect(Self.everything(try makeDatabase(db.path)) == live)
        // The next commit over the threshold starts a checkpoint again, and it completes.
        db.checkpointPause.withLock { $0 = nil }
        let start = try Self.commitOverTheThreshold(db, named: "again")
        db.waitForCheckpoint()
        #expect(try Self.journalHeader(db) == (before.generation + 2, start))
    }

    @Test func laggingFilesOfPartialRecordsAreRewrittenByTheBackgroundCheckpoint() throws {
        let db = try Self.database()
        let long = String(repeating: "a line of the note's text\n", count: 200)
        let names = ["p0", "p1", "p2"]
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
        let gate = Self.pauseCheckpoint(db)
        _ = try Self.commitOverTheThreshold(db)
        #expect(gate.paused.wait(timeout: .now() + 60) == .success)
        #expect(try !file("p0").contains("renamed p0"))  // not before step 3
        // Meanwhile p1 is renamed again (its file lags behind a commit the new journal holds) and
        // p2 is saved whole (its file is written with the commit).
        try rename("p1", to: "again p1")
        var whole = try db.record(for: RecordID(recordName: "p2"))
        whole["text"] = .string("new text\n" + long)
        try db.modify(saving: [whole])
        gate.resume.signal()
        db.waitForCheckpoint()

        #expect(try file("p0").contains("renamed p0") && file("p0").contains("a line of the note"))
        #expect(try !file("p1").contains("renamed p1"))  // its new file was dropped
        #expect(try file("p2").contains("new text"))  // its new file (without it) was dropped
        #expect(db.state.withLock { $0.index.staleRecordFiles } == ["p1"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: db.layout.temp).isEmpty)
        for reader in [db, try makeDatabase(db.path)] {
            let p0 = try reader.record(for: RecordID(recordName: "p0"))
            let p1 = try reader.record(for: RecordID(recordName: "p1"))
            let p2 = try reader.record(for: RecordID(recordName: "p2"))
            #expect(p0["title"] == "renamed p0" && p0["text"] == .string(long))
            #expect(p1["title"] == "again p1" && p1["text"] == .string(long))
            #expect(p2["title"] == "renamed p2" && p2["text"] == .string("new text\n" + long))
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
        let gate = Self.pauseCheckpoint(db)
        let before = try Self.journalHeader(db)
        _ = try Self.commitOverTheThreshold(db)
        #expect(gate.paused.wait(timeout: .now() + 60) == .success)
        // Fill the disk: the rest of the snapshot cannot be written.
        let fill = point + "/fill"
        let fd = open(fill, O_WRONLY | O_CREAT, 0o600)
        try #require(fd >= 0)
        let zeros = [UInt8](repeating: 0, count: 1 << 16)
        while write(fd, zeros, zeros.count) > 0 {}
        #expect(errno == ENOSPC)
        close(fd)
        gate.resume.signal()
        db.waitForCheckpoint()

        #expect(try Self.journalHeader(db) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: db.layout.temp).isEmpty)
        #expect(db.state.withLock { $0.checkpoint == nil })
        #expect(db.recentProblems.contains { $0.hasPrefix("checkpoint:") }, "\(db.recentProblems)")
        let live = Self.everything(db)
        #expect(live.count == 1 + 1500 + 5)
        #expect(Self.everything(try makeDatabase(db.path)) == live)

        // Room again. A small commit starts no other checkpoint: after a failure it waits for 4 MiB more.
        try #require(unlink(fill) == 0)
        db.checkpointPause.withLock { $0 = nil }
        try db.modify(saving: [note("small", folder: "f")])
        db.waitForCheckpoint()
        #expect(try Self.journalHeader(db) == before)
        let start = try Self.commitOverTheThreshold(db, named: "again")
        db.waitForCheckpoint()
        #expect(try Self.journalHeader(db) == (before.generation + 1, start))
        #expect(Self.everything(try makeDatabase(db.path)) == Self.everything(db))
    }

    @Test func closeWaitsForTheBackgroundCheckpoint() throws {
        let db = try Self.database()
        let before = try Self.journalHeader(db)
        let start = try Self.commitOverTheThreshold(db)
        try db.close()
        #expect(try Self.journalHeader(db) == (before.generation + 1, start))
        #expect(try FileManager.default.contentsOfDirectory(atPath: db.layout.temp).isEmpty)
    }

    @Test func entriesKeepEachRecordsEarlierMetadataFromItsFirstChange() throws {
        func metadata(_ name: String, _ title: String) -> RecordMetadata {
            var record = note(name, folder: nil)
            record["title"] = .string(title)
            return RecordMetadata(savedRecord: record, seq: 1)
        }
        var entries = RecordEntries()
        for name in ["a", "b", "c", "d"] { entries[name] = metadata(name, "old") }
        entries["a"] = metadata("a", "not kept")
        entries.keepEarlierValues()
        entries["a"] = metadata("a", "new")
        entries["a"] = metadata("a", "newer")
        entries.removeValue(forKey: "b")
        entries.removeValue(forKey: "c")
        entries["c"] = metadata("c", "again")
        entries["e"] = metadata("e", "new")
        entries.removeValue(forKey: "unknown")
        #expect(Self.title(entries.valueWhenKept("a")) == "not kept")
        #expect(Self.title(entries.valueWhenKept("b")) == "old")
        #expect(Self.title(entries.valueWhenKept("c")) == "old")
        #expect(Self.title(entries.valueWhenKept("d")) == "old")
        #expect(entries.valueWhenKept("e") == nil)
        #expect(entries.valueWhenKept("unknown") == nil)
        #expect(Self.title(entries["a"]) == "newer" && entries["b"] == nil && Self.title(entries["c"]) == "again")
        entries.forgetEarlierValues()
        #expect(Self.title(entries.valueWhenKept("a")) == "newer")
        #expect(entries.valueWhenKept("b") == nil)
        #expect(Self.title(entries.valueWhenKept("e")) == "new")
    }
}
