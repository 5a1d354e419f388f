/// The virtual trees' parts without a mount: link names and targets, the inode table's lookup
/// counts, and the default search over the store.

import FUSE
import Foundation
import Notes
import RecordStore
import TestSupport
import Testing

@testable import NotesFS

@Suite struct VirtualTreeModelTests {
    typealias Hit = VirtualLinkNames.Hit

    @Test func linksAreNamedAsTheirFilesAndSharedNamesTakeTheFolder() {
        let hits = [
            Hit(recordName: "R1", path: ["Work", "Note.md"]),
            Hit(recordName: "R2", path: ["Note.md"]),
            Hit(recordName: "R3", path: ["Home", "Sub", "Note.md"]),
            Hit(recordName: "R4", path: ["Home", "Plan (1a2b3c).md"]),
            Hit(recordName: "R5", path: ["photo.png"]),
        ]
        #expect(
            VirtualLinkNames.names(hits) == ["Note (Work).md", "Note.md", "Note (Home\u{2215}Sub).md", "Plan (1a2b3c).md", "photo.png"])
    }

    @Test func aNameStillTakenGetsTheRecordNameSuffix() {
        // A root note titled "Note (Work)" ranks first; the Work note's folder name would take its name.
        let hits = [
            Hit(recordName: "AAA-111", path: ["Note (Work).md"]),
            Hit(recordName: "BBB-222-xyz", path: ["Work", "Note.md"]),
            Hit(recordName: "CCC", path: ["Note.md"]),
        ]
        #expect(VirtualLinkNames.names(hits) == ["Note (Work).md", "Note (bbb222).md", "Note.md"])
        // A folder path too long for a name gives way to the record name.
        let long = String(repeating: "f", count: 120)
        let names = VirtualLinkNames.names([Hit(recordName: "XYZ789", path: [long, "N.md"]), Hit(recordName: "Q", path: ["N.md"])])
        #expect(names == ["N (xyz789).md", "N.md"])
        // Names stay within NAME_MAX however long the title.
        let title = String(repeating: "t", count: 252) + ".md"
        let fitted = VirtualLinkNames.names([Hit(recordName: "A1", path: ["F", title]), Hit(recordName: "B2", path: ["G", title])])
        #expect(fitted.allSatisfy { $0.utf8.count <= 255 })
        #expect(Set(fitted).count == 2)
    }

    @Test func targetsClimbToTheRootThenDown() {
        #expect(String(decoding: VirtualLinkNames.target(depth: 1, path: ["Note.md"]), as: UTF8.self) == "../Note.md")
        #expect(String(decoding: VirtualLinkNames.target(depth: 2, path: ["A", "B", "N.md"]), as: UTF8.self) == "../../A/B/N.md")
    }

    @Test func theTableCountsLookupsAndFreesForgottenNodes() {
        var table = VirtualNodeTable()
        let root = table.inode(parent: 1, name: ".search", kind: .directory(tree: 1, path: []), pinned: true)
        #expect(VirtualNodeTable.isVirtual(root))
        #expect(!VirtualNodeTable.isVirtual(1 << 48))
        let query = table.inode(parent: root, name: "milk", kind: .directory(tree: 1, path: ["milk"]))
        #expect(
            table.inode(parent: root, name: "milk", kind: .directory(tree: 1, path: ["milk"])) == query, "the same name, the same inode")
        let link = table.inode(parent: query, name: "N.md", kind: .link)
        table.countLookup(query)
        table.countLookup(link)
        table.countLookup(link)
        table.setListing(of: query, .init(key: .init(appliedChanges: 1, hidden: 0), entries: []))
        #expect(table.listings[query] != nil)
        // The directory's references go first (as they cannot in the kernel, which holds the
        // parent of a held child): it stays while its link is held.
        table.forget(query, lookups: 1)
        #expect(table.nodes[query] != nil)
        table.forget(link, lookups: 1)
        #expect(table.nodes[link] != nil)
        table.forget(link, lookups: 1)
        #expect(table.nodes[link] == nil)
        #expect(table.nodes[query] == nil, "freed with its last child")
        #expect(table.listings[query] == nil)
        // A tree's own directory stays; a name looked up again gets a new number.
        table.forget(root, lookups: 10)
        #expect(table.nodes[root] != nil)
        #expect(table.inode(parent: root, name: "milk", kind: .directory(tree: 1, path: ["milk"])) > link)
        // Numbers readdir handed out without a reference go when the directory is listed again.
        let hinted = table.inode(parent: root, name: "x", kind: .link)
        let held = table.inode(parent: root, name: "y", kind: .link)
        table.countLookup(held)
        table.dropUnreferencedChildren(of: root)
        #expect(table.nodes[hinted] == nil)
        #expect(table.nodes[held] != nil)
        #expect(table.nodes.count == 2)
        // Forgetting an inode the table never had is ignored.
        table.forget(12345, lookups: 1)
        #expect(table.nodes.count == 2)
    }

    @Test func theStoreSearchMatchesEveryWordInTitleOrText() throws {
        try withDatabaseDirectory { path in
            let database = try RecordDatabase(path: path, create: true)
            defer { try? database.close() }
            func note(_ title: String, _ text: String, _ minute: Double) throws -> RecordID {
                var record = Note(title: title, text: text).record
                record.modificationDate = Date(timeIntervalSince1970: 1_700_000_000 + minute * 60)
                return try database.modify(saving: [record]).savedRecords[0].recordID
            }
            let groceries = try note("Groceries", "Milk and BREAD", 1)
            let milk = try note("Milk", "just that", 3)
            let creme = try note("Crème", "brûlée", 2)
            var attachment = Attachment(name: "Bread.pdf", content: nil).record
            attachment.modificationDate = Date(timeIntervalSince1970: 1_700_000_000 + 4 * 60)
            let pdf = try database.modify(saving: [attachment]).savedRecords[0].recordID
            let search = StoreSearch(database: database)
            #expect(try search.search("milk", limit: 10) == [milk, groceries], "best first: the title")
            #expect(try search.search("bread milk", limit: 10) == [groceries])
            #expect(try search.search("bread", limit: 10) == [pdf, groceries])
            #expect(try search.search("bread", limit: 1) == [pdf])
            #expect(try search.search("CREME brulee", limit: 10) == [creme])
            let refused = #expect(throws: NotesError.self) { try search.search("  \t ", limit: 10) }
            #expect(refused.map { ErrnoMapping.errno(for: $0) } == .invalidArgument, "the mount answers EINVAL")
            #expect(try search.search("milk", limit: 0) == [])
            #expect(try search.search("\"quoted\" and 'odd' %@ \\ characters", limit: 10) == [])
        }
    }
}
