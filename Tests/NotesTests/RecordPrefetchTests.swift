import Foundation
import Index
import RecordStore
import Testing

@testable import Notes

/// A build's next batch read and made into documents on other threads (``RecordPrefetch``): what a
/// direct read gives, and nothing for a batch it did not read (another process moved the build's
/// cursor).
@Suite struct RecordPrefetchTests {
    @Test func itGivesWhatADirectReadGivesForItsOwnBatchOnly() throws {
        let notes = try makeManager()
        let records = (0..<50).map { Note(title: "n\($0)", text: "text \($0)").record }
        _ = try notes.database.modify(saving: records)
        let ids = records.map(\.recordID) + [RecordID(recordName: "missing")]
        let prefetch = RecordPrefetch(notes.database, ids, transform: { $0 }, finish: { $1 })
        #expect(prefetch.value(ifFor: Array(ids.dropFirst())) == nil)
        let read = try #require(prefetch.value(ifFor: ids))
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

    /// The documents a build writes from a prefetch (text made on its readers, then placed) are
    /// those a catch-up writes (made on the writing thread), for notes with links, tags, CJK text,
    /// in folders, with namesakes, and for a record that is gone.
    @Test func itsDocumentsAreThoseMadeOnTheWritingThread() async throws {
        let notes = try makeManager()
        let work = try await notes.newFolder(name: "Work")
        var records: [Record] = []
        for i in 0..<40 {
            let text = "see [[n\(i + 1)]] #tag\(i % 3) 東京タワー Crème \(i)\n---\nstatus: x\n---"
            records.append(Note(title: i % 5 == 0 ? "same" : "n\(i)", text: text, folder: i % 2 == 0 ? work.recordID : nil).record)
        }
        _ = try notes.database.modify(saving: records)
        let ids = records.map(\.recordID) + [RecordID(recordName: "missing")]
        let database = notes.database
        let prefetch = RecordPrefetch(database, ids) { record in
            var text = NotesSearchIndex.document(record, folder: nil, fileName: "")
            text.prepareText()
            return text
        } finish: { ids, texts in
            NotesSearchIndex.documents(ids, texts: texts, in: database, contents: FolderContents(database: database))
        }
        let made = try #require(prefetch.value(ifFor: ids))
        let direct = NotesSearchIndex(database: database).documents(ids, contents: FolderContents(database: database))
        #expect(made.count == direct.count)
        for (a, b) in zip(made, direct) {
            #expect(a.name == b.name)
            guard let x = a.document, let y = b.document else {
                #expect(a.document == nil && b.document == nil && a.name == "missing")
                continue
            }
            #expect(x.preparedText != nil && y.preparedText == nil)
            #expect(
                [x.folder, x.fileName, x.nameKey, x.title, x.body, x.cjk, "\(x.links)", "\(x.tags)", "\(x.properties)"]
                    == [y.folder, y.fileName, y.nameKey, y.title, y.body, y.cjk, "\(y.links)", "\(y.tags)", "\(y.properties)"])
            #expect(x.preparedText?.cjk == y.cjk && x.preparedText?.grams == Predicate.substringForm(y.body))
            #expect(!x.fileName.isEmpty)
        }
    }
}
