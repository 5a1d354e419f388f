import Foundation
import Synchronization
import TestSupport
import Testing

@testable import RecordStore

/// A process with a background thread (the mount) writes the index file of a checkpoint on a
/// thread of its own: the commit that takes the journal over the threshold returns first, the
/// commits made while the file is written are carried into the new journal, and every reader
/// (this instance, another process, a fresh open at any point) sees every commit once.
@Suite struct BackgroundCheckpointTests {
    /// A database of a folder and 1,500 small notes, opened as the mount opens it.
    static func database() throws -> RecordDatabase {
        let db = try RecordDatabase(path: makeTemporaryDirectory(), backgroundThread: true)
        try db.modify(saving: [folder("f")] + (0..<1500).map { note("n\($0)", folder: "f", text: "small \($0)") })
        return db
    }

    static func title(_ db: RecordDatabase, _ name: String) -> String? {
        CheckpointTests.title(db.metadata(for: RecordID(recordName: name)))
    }

    /// Seqs each observer change named, in order.
    final class Heard: Sendable {
        let seqs = Mutex<[UInt64]>([])
        let resets = Mutex(0)
        func observe(_ db: RecordDatabase) {
            _ = db.addObserver { [self] change in
                if change.isReset { resets.withLock { $0 += 1 } } else { seqs.withLock { $0.append(change.token.seq) } }
            }
        }
    }

    @Test func commitsMadeWhileTheIndexFileIsWrittenAreCarriedIntoTheNewJournal() throws {
        let db = try Self.database()
        let follower = try RecordDatabase(path: db.path, backgroundThread: false)
        let heard = Heard()
        heard.observe(follower)
        let before = try CheckpointTests.journalHeader(db)
        let returned = Atomic(false)
        let duringPause = Mutex<(returnedFirst: Bool, live: [String: RecordMetadata])?>(nil)
        db.checkpointPause.withLock {
            $0 = { @Sendable in
                // The commit over the threshold has returned before the index file was written.
                var waited = 0
                while !returned.load(ordering: .acquiring) && waited < 500 {
                    usleep(10_000)
                    waited += 1
                }
                do {
                    try db.modify(saving: (0..<10).map { note("during\($0)", folder: "f", text: "during \($0)") })
                    var n0 = try db.record(for: RecordID(recordName: "n0"))
                    n0["title"] = .string("changed during")
                    try db.modify(saving: [n0])
                    try db.modify(deleting: [RecordID(recordName: "n1")])
                    try follower.refresh()  // reads these three commits in the old journal
                    duringPause.withLock { $0 = (returned.load(ordering: .acquiring), CheckpointTests.everything(db)) }
                } catch {
                    Issue.record("commit during the checkpoint: \(error)")
                }
            }
        }
        let start = try CheckpointTests.commitOverTheThreshold(db)
        returned.store(true, ordering: .releasing)
        db.waitForCheckpoint()

        let pause = try #require(duringPause.withLock { $0 })
        #expect(pause.returnedFirst)
        #expect(pause.live["during9"] != nil)
        // The new journal starts at the commit over the threshold and holds the three commits after it.
        let header = try CheckpointTests.journalHeader(db)
        #expect(header == (before.generation + 1, start), "\(header) \(before) \(db.recentProblems)")
        #expect(try CheckpointTests.indexHeader(db).seq == start)
        var journal = try JournalFile(path: db.layout.journal, writable: false)
        var carried: [UInt64] = []
        _ = try journal.readEntries { carried.append($0.seq) }
        journal.close()
        #expect(carried == [start + 1, start + 2, start + 3])  // applied again from memory (carriedEntries)
        #expect(db.state.withLock { $0.pendingCheckpoint == nil && $0.index.seq == start + 3 })
        #expect(db.state.withLock { $0.index.entries.overlay.count } == 11)  // ten notes and n0; n1 is deleted

        let live = CheckpointTests.everything(db)
        #expect(live.count == 1 + 1500 + 2 + 10 - 1 && db.recordCount == live.count)
        #expect(Self.title(db, "n0") == "changed during" && live["n1"] == nil && live["big1"] != nil)
        // Commits after it, then every reader.
        try db.modify(deleting: [RecordID(recordName: "during0")])
        let final = CheckpointTests.everything(db)
        try follower.refresh()
        #expect(CheckpointTests.everything(follower) == final)
        #expect(CheckpointTests.everything(try makeDatabase(db.path)) == final)
        // The follower heard each commit once, in order, and no reset.
        let seqs = heard.seqs.withLock { $0 }
        #expect(seqs == Array(seqs.sorted()) && Set(seqs).count == seqs.count && seqs.last == start + 4)
        #expect(heard.resets.withLock { $0 } == 0)
        #expect(try db.check().problems.isEmpty)
        try db.close()
    }

    /// Commits of more than ``RecordDatabase/carriedLimit`` bytes while the file is written are
    /// not kept in memory for the last step, which reads them back from the journal instead.
    @Test func manyBytesCommittedMeanwhileAreReadBackFromTheJournal() throws {
        let db = try Self.database()
        let kept = Mutex<(small: Int?, large: Int?)>((nil, nil))
        let megabyte = String(repeating: "m", count: 1 << 20)
        db.checkpointPause.withLock {
            $0 = { @Sendable in
                do {
                    try db.modify(saving: [note("small", folder: "f", text: "small")])
                    let small = db.state.withLock { $0.carriedEntries?.count }
                    for i in 0..<9 { try db.modify(saving: [note("large\(i)", folder: "f", text: megabyte)]) }
                    kept.withLock { $0 = (small, db.state.withLock { $0.carriedEntries?.count }) }
                } catch {
                    Issue.record("commit during the checkpoint: \(error)")
                }
            }
        }
        let start = try CheckpointTests.commitOverTheThreshold(db)
        db.waitForCheckpoint()
        #expect(kept.withLock { $0.small } == 1 && kept.withLock { $0.large } == nil)
        #expect(try CheckpointTests.journalHeader(db).baseSeq == start)
        #expect(db.state.withLock { $0.index.seq == start + 10 && $0.index.entries.overlay.count == 10 })
        let live = CheckpointTests.everything(db)
        #expect(live.count == 1 + 1500 + 2 + 10 && live["large8"] != nil)
        #expect(CheckpointTests.everything(try makeDatabase(db.path)) == live)
        #expect(try db.record(for: RecordID(recordName: "large8"))["text"] == .string(megabyte))
        // The next checkpoint counts its own bytes from zero: its small commit is kept again.
        let next = Mutex<Int?>(nil)
        db.checkpointPause.withLock {
            $0 = { @Sendable in
                do {
                    try db.modify(saving: [note("small again", folder: "f", text: "small")])
                    next.withLock { $0 = db.state.withLock { $0.carriedEntries?.count } }
                } catch {
                    Issue.record("commit during the second checkpoint: \(error)")
                }
            }
        }
        let second = try CheckpointTests.commitOverTheThreshold(db, named: "again")
        db.waitForCheckpoint()
        #expect(next.withLock { $0 } == 1)
        #expect(try CheckpointTests.journalHeader(db).baseSeq == second)
        #expect(CheckpointTests.everything(try makeDatabase(db.path)) == CheckpointTests.everything(db))
        try db.close()
    }

    /// A process that opens while the file is written finds the file past the journal's base (as
    /// a checkpoint killed between its two writes leaves them), reads every commit, and
    /// checkpoints the long journal itself: this instance's checkpoint is then dropped.
    @Test func aProcessOpeningMeanwhileReadsEveryCommit() throws {
        let db = try Self.database()
        let opened = Mutex<(file: UInt64, journal: UInt64, records: [String: RecordMetadata], live: [String: RecordMetadata])?>(nil)
        db.checkpointPause.withLock {
            $0 = { @Sendable in
                do {
                    try db.modify(saving: [note("during", folder: "f", text: "during")])
                    let file = try CheckpointTests.indexHeader(db).seq
                    let journal = try CheckpointTests.journalHeader(db).baseSeq
                    let fresh = try RecordDatabase(path: db.path, backgroundThread: false)
                    opened.withLock { $0 = (file, journal, CheckpointTests.everything(fresh), CheckpointTests.everything(db)) }
                } catch {
                    Issue.record("open during the checkpoint: \(error)")
                }
            }
        }
        let start = try CheckpointTests.commitOverTheThreshold(db)
        db.waitForCheckpoint()
        let seen = try #require(opened.withLock { $0 })
        #expect(seen.file == start && seen.journal < start)
        #expect(seen.records == seen.live && seen.live["during"] != nil && seen.live.count == 1 + 1500 + 2 + 1)
        try db.modify(deleting: [RecordID(recordName: "during")])
        #expect(db.state.withLock { $0.pendingCheckpoint == nil })
        #expect(CheckpointTests.everything(try makeDatabase(db.path)) == CheckpointTests.everything(db))
        #expect(try db.check().problems.isEmpty)
        try db.close()
    }

    @Test func anotherProcessCheckpointingMeanwhileDropsIt() throws {
        let db = try Self.database()
        let other = try RecordDatabase(path: db.path, backgroundThread: false)
        let before = try CheckpointTests.journalHeader(db)
        db.checkpointPause.withLock {
            $0 = { @Sendable in
                do {
                    try other.modify(saving: [note("other", folder: "f", text: "from the other process")])
                    try other.checkpoint()
                } catch {
                    Issue.record("the other process's checkpoint: \(error)")
                }
            }
        }
        _ = try CheckpointTests.commitOverTheThreshold(db)
        db.waitForCheckpoint()

        let otherSeq = other.state.withLock { $0.index.seq }
        let header = try CheckpointTests.journalHeader(db)
        // The other's commit found the journal long and checkpointed, then its checkpoint() again.
        #expect(header == (before.generation + 2, otherSeq))
        #expect(try CheckpointTests.indexHeader(db).seq == otherSeq)
        try db.refresh()
        #expect(db.state.withLock { $0.pendingCheckpoint == nil && $0.journal.generation == before.generation + 2 })
        let live = CheckpointTests.everything(db)
        #expect(live.count == 1 + 1500 + 2 + 1 && db.recordCount == live.count && live["other"] != nil)
        #expect(CheckpointTests.everything(other) == live)
        #expect(CheckpointTests.everything(try makeDatabase(db.path)) == live)
        // The next checkpoint of this instance goes through.
        db.checkpointPause.withLock { $0 = nil }
        let again = try CheckpointTests.commitOverTheThreshold(db, named: "again")
        db.waitForCheckpoint()
        #expect(try CheckpointTests.journalHeader(db) == (before.generation + 3, again))
        #expect(CheckpointTests.everything(try makeDatabase(db.path)) == CheckpointTests.everything(db))
        #expect(try db.check().problems.isEmpty)
        try db.close()
    }
}
