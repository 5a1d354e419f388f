import Foundation
import Synchronization
import TestSupport
import Testing

@testable import RecordStore

/// A commit first reads the commits other handles made since this one last looked ("catch up");
/// its observers must hear of those even when the commit itself then fails, as a save with a change
/// tag the caught-up commits made stale does. (A mount that missed them kept showing a folder
/// without a note another process had added, until it was remounted.)
@Suite struct CatchUpNotificationTests {
    static func isStaleTag(_ error: RecordStoreError?) -> Bool {
        guard case .serverRecordChanged? = error else { return false }
        return true
    }

    @Test func otherHandlesCommitsReachObserversWhenTheCommitThatReadThemFails() throws {
        let path = makeTemporaryDirectory("catchup")
        let mine = try makeDatabase(path)
        let other = try makeDatabase(path)
        try mine.modify(saving: [note("edited", folder: nil, text: "one")])
        let stale = try mine.record(for: RecordID(recordName: "edited"))
        let seen = Mutex<[RecordStoreChange]>([])
        mine.addObserver { change in seen.withLock { $0.append(change) } }

        // Another handle adds a note and edits the one this handle holds, without this one reading it.
        try other.modify(saving: [note("added", folder: nil)])
        var edited = try other.record(for: RecordID(recordName: "edited"))
        edited["text"] = .string("two")
        try other.modify(saving: [edited])

        var mineEdited = stale
        mineEdited["text"] = .string("three")
        var failure: RecordStoreError?
        do throws(RecordStoreError) { try mine.modify(saving: [mineEdited]) } catch { failure = error }
        #expect(Self.isStaleTag(failure), "a save with a stale change tag: \(String(describing: failure))")
        let told = seen.withLock { $0 }
        #expect(told.allSatisfy { $0.isExternal }, "only other handles' commits were told")
        #expect(Set(told.flatMap(\.saved).map(\.recordID.recordName)) == ["added", "edited"], "\(told)")
        // And nothing is told twice: a refresh finds nothing new.
        try mine.refresh()
        #expect(seen.withLock { $0.count } == told.count)
        #expect(mine.metadata(for: RecordID(recordName: "added")) != nil)
    }
}
