/// `.search` in a mount answers from the full-text index (issue 24): ranked, prefix*, phrases,
/// accents folded; a note written through the mount and searched at once is found, a removed
/// one is gone; the index is built in the background at mount time.

import Foundation
import Index
import Notes
import RecordStore
import Testing

@testable import NotesFS

@Suite struct SearchMountTests {
    @Test func searchDirectoriesUseTheIndex() throws {
        try withNotesMount(seed: { db in
            let work = try db.modify(saving: [Folder(name: "Work").record]).savedRecords[0]
            _ = try db.modify(saving: [Note(title: "Bread", text: "flour and water", folder: work.recordID).record])
            _ = try db.modify(saving: [Note(title: "Groceries", text: "milk, bread, Crème fraîche").record])
        }) { m in
            // The background build is quick here; until it is done `.search` answers by scanning,
            // which has no prefix queries: wait for the index (never for a time the test asserts).
            var built = false
            for _ in 0..<200 where !built {
                if (try? TextIndex(databasePath: m.databasePath, create: false).token()) != nil { built = true } else { usleep(50_000) }
            }
            #expect(built)
            // Ranked: the title match first; prefix and phrase queries; accents folded.
            #expect(listing(m.path(".search/brea*")).map(Set.init) == ["Bread.md", "Groceries.md"])
            #expect(try sh("ls -f \(quoted(m.path(".search/bread"))) | grep -v '^[.]'").output.split(separator: "\n").first == "Bread.md")
            #expect(listing(m.path(".search/\"milk, bread\"")) == ["Groceries.md"])
            #expect(listing(m.path(".search/creme")) == ["Groceries.md"])
            #expect(listing(m.path(".search/bread NOT milk")) == ["Bread.md"])
            // Written through the mount and searched at once.
            try Data("a zebra crossing\n".utf8).write(to: URL(fileURLWithPath: m.path("Work/Zoo.md")))
            #expect(listing(m.path(".search/zebra")) == ["Zoo.md"])
            #expect(try String(contentsOfFile: m.path(".search/zebra/Zoo.md"), encoding: .utf8) == "a zebra crossing\n")
            #expect(unlink(m.path("Work/Zoo.md")) == 0)
            #expect(listing(m.path(".search/zebra")) == [])
            // `query` through the store narrows with the index and agrees with it.
            let query = Query(recordType: Note.recordType, predicate: try Predicate(format: "text CONTAINS 'our and'"))
            #expect(m.database.queryMetadata(query).count == 1)
        }
    }
}
