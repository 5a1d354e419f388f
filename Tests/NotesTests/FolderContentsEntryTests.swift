import Foundation
import TestSupport
import Testing

@testable import Notes
@testable import RecordStore

/// A record's entry named from its namesakes (``FolderContents/uncontestedEntry(_:)``, what `query`
/// prints paths with, and what a path is resolved with) is the entry its folder's whole listing
/// gives, whatever the names: clashes, escapes, `Untitled`, `.`, canonically equal spellings, notes
/// beside attachments named `X.md`, at the root and in folders, in the index file and in memory.
@Suite struct FolderContentsEntryTests {
    static let names = [
        "A", "A", "a", "A (abcdef)", "", "Untitled", "Untitled.md", "x/y", "x\u{2215}y", "B.md", "B", ".", "\u{2024}", "caf\u{E9}",
        "cafe\u{301}", String(repeating: "L", count: 250), String(repeating: "L", count: 252), "C",
    ]

    /// A database of random names in the root, three folders and one inside the first; returns
    /// its records (the inner folder, renamed to a clashing name, last).
    static func database(at path: String, seed: UInt64) throws -> (RecordDatabase, [RecordID], places: [RecordID?]) {
        let database = try RecordDatabase(path: path, backgroundThread: false)
        var rng = SeededGenerator(state: seed)
        let folders = (0..<3).map { Folder(name: "F\($0)").record }
        try database.modify(saving: folders)
        let inner = Folder(name: "Inner", parent: folders[0].recordID).record
        try database.modify(saving: [inner])
        let places: [RecordID?] = [nil] + folders.map(\.recordID) + [inner.recordID]
        var ids: [RecordID] = []
        for round in 0..<6 {
            var saving: [Record] = []
            for _ in 0..<12 {
                let name = Self.names[Int(rng.next() % UInt64(Self.names.count))]
                let place = places[Int(rng.next() % UInt64(places.count))]
                let record: Record
                switch rng.next() % 4 {
                case 0: record = Attachment(name: name, content: nil, folder: place).record
                case 1: record = Folder(name: name, parent: place).record
                default: record = Note(title: name, folder: place).record
                }
                saving.append(record)
                ids.append(record.recordID)
            }
            try database.modify(saving: saving)
            if round == 2 { try database.checkpoint() }  // the first half in the file, the rest in memory
        }
        var renamed = try database.record(for: inner.recordID)
        renamed["name"] = .string("A")
        try database.modify(saving: [renamed])
        ids.append(inner.recordID)
        return (database, ids, places)
    }

    @Test(arguments: [1, 2, 3])
    func anEntryNamedFromItsNamesakesIsTheListingsEntry(seed: UInt64) throws {
        let path = makeTemporaryDirectory("contents-entry")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (database, ids, _) = try Self.database(at: path, seed: seed)
        var fromNamesakes = 0
        for id in ids {
            let listed = FolderContents(database: database)
            let metadata = try #require(database.metadata(for: id))
            let expected = try #require(listed.children(of: listed.shownFolder(of: metadata)).first { $0.recordID == id })
            let single = FolderContents(database: database)
            if single.uncontestedEntry(metadata) != nil { fromNamesakes += 1 }
            let entry = try #require(single.entry(for: id))
            #expect(entry.fileName == expected.fileName, "\(metadata.field("title") ?? metadata.field("name") ?? .string(""))")
            #expect(entry.path == expected.path)
            #expect(entry.name == expected.name && entry.kind == expected.kind && entry.parent == expected.parent)
            // Its path leads back to it without listing the folders on the way (when uncontested).
            #expect(try FolderContents(database: database).resolve(expected.path)?.recordID == id, "\(expected.path)")
        }
        // Many are uncontested, the others were named through the listing.
        #expect(fromNamesakes > ids.count / 5, "\(fromNamesakes) of \(ids.count)")
        #expect(fromNamesakes < ids.count, "clashes and escapes fall back to the listing")
    }

    /// Naming every record with one instance (a catch-up of many saves: the full-text indexer's)
    /// gives the listing's file names and keeps no folder's listing, whose entries hold their
    /// metadata and paths.
    @Test(arguments: [1, 2, 3])
    func namingManyRecordsGivesTheListingsNamesAndKeepsNoListing(seed: UInt64) throws {
        let path = makeTemporaryDirectory("contents-names")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (database, ids, places) = try Self.database(at: path, seed: seed)
        var rng = SeededGenerator(state: seed)
        let naming = FolderContents(database: database)
        let listed = FolderContents(database: database)
        for id in ids.shuffled(using: &rng) {
            let metadata = try #require(database.metadata(for: id))
            let folder = naming.shownFolder(of: metadata)
            let expected = listed.children(of: listed.shownFolder(of: metadata)).first { $0.recordID == id }
            #expect(naming.fileName(for: metadata, in: folder) == expected?.fileName)
        }
        for place in places { #expect(!naming.isListed(place)) }
    }

    /// The names a namesake lookup cannot answer from the stored names alone (an escape's
    /// character, a name given to names that cannot show as themselves): ASCII names are none.
    @Test(arguments: [
        ("", true), ("Untitled", true), ("Untitled.md", true), ("a\u{2215}b.md", true), ("x\u{2400}", true),
        ("\u{2024}", true), ("\u{2025}", true), ("e\u{301}\u{2215}", true), ("note 1.md", false), ("Caf\u{E9}.md", false),
        ("Untitled 2.md", false), ("..", false), ("\u{2024}\u{2024}", false),
    ])
    func namesThatMayShowAsAnother(_ name: String, _ may: Bool) {
        #expect(FolderContents.mayShowAsAnotherName(name) == may)
    }

    /// A catch-up of the text index names each saved record, then gives the namesakes of the
    /// names it touched their names: it keeps what it found (``FolderContents/keepsNamesakes``), so
    /// the second look at a name reads nothing from the store, until ``FolderContents/invalidate()``.
    @Test func keptNamesakesAreReadFromTheStoreOnce() async throws {
        let notes = try makeManager()
        let work = try await notes.newFolder(name: "Work")
        _ = try await notes.save(note: Note(title: "Plan", text: "one", folder: work.recordID))
        _ = try await notes.save(note: Note(title: "Plan", text: "two", folder: work.recordID))
        try notes.database.checkpoint()  // read from the index file from here on, which counts its rows
        for keeps in [false, true] {
            let contents = FolderContents(database: notes.database)
            contents.keepsNamesakes = keeps
            var read = notes.database.metadataRowsRead
            #expect(contents.namesakes(showingAs: "Plan.md", in: work.recordID)?.count == 2)
            #expect(notes.database.metadataRowsRead > read)
            read = notes.database.metadataRowsRead
            #expect(contents.namesakes(showingAs: "Plan.md", in: work.recordID)?.count == 2)
            #expect((notes.database.metadataRowsRead == read) == keeps, "keeps \(keeps)")
            contents.invalidate()
            read = notes.database.metadataRowsRead
            #expect(contents.namesakes(showingAs: "Plan.md", in: work.recordID)?.count == 2)
            #expect(notes.database.metadataRowsRead > read)
        }
    }
}
