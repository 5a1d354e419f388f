import Foundation
import Synchronization
import TestSupport
import Testing

@testable import RecordStore

/// `holdingOffOtherWriters`: another process (here another instance, whose commit lock is a
/// descriptor of its own) commits only after the hold ends; this process's commits, reads and
/// queries go on inside it.
@Suite struct HoldingOffOtherWritersTests {
    @Test func anotherInstanceCommitsAfterTheHoldAndThisOneInside() throws {
        let path = makeTemporaryDirectory()
        let db = try makeDatabase(path)
        let text = String(repeating: "lorem ipsum ", count: 40)  // over the small-field limit: read from the file
        try db.modify(saving: (0..<50).map { note("n\($0)", folder: nil, text: text + "\($0)") })
        let other = try makeDatabase(path)
        let landed = ConditionLock<Bool>(false)
        let held = ConditionLock<Bool>(false)
        let writer = Mutex<BackgroundWorker?>(nil)
        /// What the hold's body saw, checked on the test's thread.
        struct Seen: Sendable {
            var ownCommitWent = false
            var otherLandedInside = true
            var otherVisibleInside = true
            var queried: [String] = []
            var read: FieldValue?
            var error: String?
        }
        let seen = Mutex(Seen())
        // Inside the hold: the other instance's commit waits; this one's own go through, and a
        // query that reads record files (which waits for no commit writing them) answers.
        let inside = BackgroundWorker.start(name: "test.hold") { _ in
            do {
                try db.holdingOffOtherWriters {
                    let started = BackgroundWorker.start(name: "test.other") { _ in
                        _ = try? other.modify(saving: [note("theirs", folder: nil, text: "x")])
                        landed.withLock { $0 = true }
                    }
                    writer.withLock { $0 = started }
                    let before = db.currentToken
                    try db.modify(saving: [note("ours", folder: nil, text: "y")])
                    let ownCommitWent = db.currentToken.isNewer(than: before)
                    let waited = landed.wait(until: .now + .milliseconds(300)) { $0 ? true : nil } ?? false
                    try db.refresh()
                    let visible = db.metadata(for: RecordID(recordName: "theirs")) != nil
                    let predicate = try RecordStore.Predicate(format: "text CONTAINS 'ipsum 7'")
                    let found = db.queryMetadata(Query(recordType: "Note", predicate: predicate)).map(\.recordID.recordName)
                    let read = try db.record(for: RecordID(recordName: "n3"))["text"]
                    seen.withLock {
                        $0 = Seen(
                            ownCommitWent: ownCommitWent, otherLandedInside: waited, otherVisibleInside: visible, queried: found, read: read
                        )
                    }
                }
            } catch { seen.withLock { $0.error = "\(error)" } }
            held.withLock { $0 = true }
        }
        let finished = held.wait(until: .now + .seconds(30)) { $0 ? true : nil } ?? false
        #expect(finished, "the hold's body waited for itself")
        guard finished else { return }  // blocked threads are not joined
        inside.join()
        let saw = seen.withLock { $0 }
        #expect(saw.error == nil)
        #expect(saw.ownCommitWent)
        #expect(!saw.otherLandedInside, "another instance committed while this one held the commit lock")
        #expect(!saw.otherVisibleInside)
        #expect(saw.queried == ["n7"])
        #expect(saw.read == .string(text + "3"))
        // Then the other instance's commit lands, after this one's.
        #expect(landed.wait(until: .now + .seconds(30)) { $0 ? true : nil } ?? false)
        writer.withLock { $0 }?.join()
        try db.refresh()
        let theirs = try #require(db.metadata(for: RecordID(recordName: "theirs")))
        let ours = try #require(db.metadata(for: RecordID(recordName: "ours")))
        #expect(theirs.seq > ours.seq)
    }

    /// A modify planned at a token is refused once another instance committed after it, and is
    /// not once the commits of others are held off between the plan and the commit.
    @Test func aPlanMadeInTheHoldCommitsOnItsToken() throws {
        let path = makeTemporaryDirectory()
        let db = try makeDatabase(path)
        let other = try makeDatabase(path)
        let planned = db.currentToken
        try other.modify(saving: [note("theirs", folder: nil)])
        #expect(throws: RecordStoreError.self) { try db.modify(saving: [note("ours", folder: nil)], unchangedSince: planned) }
        try db.holdingOffOtherWriters {
            try db.refresh()
            let token = db.currentToken
            try db.modify(saving: [note("ours", folder: nil)], unchangedSince: token)
        }
        #expect(db.metadata(for: RecordID(recordName: "ours")) != nil)
    }
}
