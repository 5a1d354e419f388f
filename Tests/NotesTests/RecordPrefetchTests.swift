import Foundation
import RecordStore
import Testing

@testable import Notes

/// A build's next batch read on another thread (``RecordPrefetch``): the records a direct read
/// gives, and nothing for a batch it did not read (another process moved the build's cursor).
@Suite struct RecordPrefetchTests {
    @Test func itGivesWhatADirectReadGivesForItsOwnBatchOnly() throws {
        let notes = try makeManager()
        let records = (0..<50).map { Note(title: "n\($0)", text: "text \($0)").record }
        _ = try notes.database.modify(saving: records)
        let ids = records.map(\.recordID) + [RecordID(recordName: "missing")]
        let prefetch = RecordPrefetch(notes.database, ids)
        #expect(prefetch.records(ifFor: Array(ids.dropFirst())) == nil)
        let read = try #require(prefetch.records(ifFor: ids))
        let direct = notes.database.records(for: ids)
        #expect(read.count == ids.count)
        for id in ids {
            switch (read[id], direct[id]) {
            case (.success(let a), .success(let b)): #expect(a == b)
            case (.failure(let a), .failure(let b)): #expect(a == b)
            default: Issue.record("\(id): \(String(describing: read[id])) against \(String(describing: direct[id]))")
            }
        }
    }
}
