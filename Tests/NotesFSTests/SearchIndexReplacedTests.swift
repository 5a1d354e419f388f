import FUSE
import Foundation
import Index
import Notes
import RecordStore
import TestSupport
import Testing

@testable import NotesFS

/// A mount follows an index file another process replaced (`notesfs reindex`).
@Suite(.tags(.mount), .needsFUSE) struct SearchIndexReplacedTests {
    func entries(_ path: String) -> Result<[String], Errno> { SearchMountMeaningTests().entries(path) }

    @Test func aMountFollowsAnIndexRebuiltByAnotherProcess() throws {
        try withNotesMount(seed: { db in
            _ = try db.modify(saving: [Note(title: "One", text: "first").record])
        }) { m in
            let notesfs = notesfsBinary
            #expect(try entries(m.path(".search/first")).get() == ["One.md"])
            let reindexed = try run([notesfs, "--db", m.databasePath, "reindex"])
            #expect(reindexed.status == 0, "\(reindexed)")
            try Data("second\n".utf8).write(to: URL(fileURLWithPath: m.path("Two.md")))
            #expect(try entries(m.path(".search/second")).get() == ["Two.md"])
            // The mount caught up the file that is there now, not the one reindex removed.
            let onDisk = try TextIndex(databasePath: m.databasePath, create: false)
            defer { onDisk.close() }
            #expect(try onDisk.search(SearchQuery("second"), limit: 10).map(\.path) == ["Two.md"])
            // And holds no removed index file open.
            let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
            let removed = fds.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0) }.filter {
                $0.hasPrefix(m.databasePath + "/indexes/") && $0.hasSuffix("(deleted)")
            }
            #expect(removed == [])
        }
    }
}
