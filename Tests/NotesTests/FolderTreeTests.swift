import Foundation
import Notes
import RecordStore
import TestSupport
import Testing

/// FolderTree's placements: reachable folders under their parents, cycle members and folders with
/// a dangling parent under Recovered, the rest under their (now shown) parents; always a forest.
@Suite struct FolderTreeTests {
    private func id(_ name: String) -> RecordID { RecordID(recordName: name) }

    /// Every folder's shown chain ends at the root or Recovered within `count` steps.
    private func expectForest(_ tree: FolderTree, _ names: [String]) {
        for name in names {
            var current = id(name)
            var steps = 0
            while case .folder(let parent) = tree.placement(ofFolder: current) {
                current = parent
                steps += 1
                if steps > names.count { break }
            }
            #expect(steps <= names.count, "the shown chain of \(name) does not end")
        }
    }

    @Test func placements() {
        let parents: [RecordID: RecordID?] = [
            id("root-a"): nil, id("a1"): id("root-a"), id("a2"): id("a1"),
            id("self"): id("self"),  // a cycle of one
            id("c1"): id("c2"), id("c2"): id("c3"), id("c3"): id("c1"),  // a cycle of three
            id("into-cycle"): id("c2"), id("below-into"): id("into-cycle"),
            id("dangling"): id("missing"), id("below-dangling"): id("dangling"),
        ]
        let tree = FolderTree(parents: parents)
        #expect(tree.placement(ofFolder: id("root-a")) == .root)
        #expect(tree.placement(ofFolder: id("a1")) == .folder(id("root-a")))
        #expect(tree.placement(ofFolder: id("a2")) == .folder(id("a1")))
        #expect(tree.recovered == ["c1", "c2", "c3", "dangling", "self"].map(id))
        #expect(tree.placement(ofFolder: id("into-cycle")) == .folder(id("c2")))
        #expect(tree.placement(ofFolder: id("below-into")) == .folder(id("into-cycle")))
        #expect(tree.placement(ofFolder: id("below-dangling")) == .folder(id("dangling")))
        #expect(tree.placement(ofFolder: id("missing")) == nil)
        #expect(tree.placement(ofItemIn: nil) == .root)
        #expect(tree.placement(ofItemIn: id("a2")) == .folder(id("a2")))
        #expect(tree.placement(ofItemIn: id("missing")) == .recovered)
        expectForest(tree, parents.keys.map(\.recordName))
    }

    /// A long chain and a long cycle are placed without recursion, in one pass.
    @Test func longChainsAndCycles() {
        var parents: [RecordID: RecordID?] = [id("n0"): nil]
        for i in 1..<20_000 { parents[id("n\(i)")] = id("n\(i - 1)") }
        for i in 0..<20_000 { parents[id("c\(i)")] = id("c\((i + 1) % 20_000)") }
        let tree = FolderTree(parents: parents)
        #expect(tree.placement(ofFolder: id("n19999")) == .folder(id("n19998")))
        #expect(tree.recovered.count == 20_000)
        #expect(tree.placement(ofFolder: id("c7")) == .recovered)
    }

    /// The incremental update agrees with a full recomputation after every step of a seeded run
    /// of creates, moves (cycles included) and cascading deletes; it refuses what it cannot tell.
    @Test(arguments: [1, 2, 3])
    func updatesAgreeWithRecomputing(seed: UInt64) throws {
        let path = makeTemporaryDirectory("notesfs-tree")
        let database = try RecordDatabase(path: path, backgroundThread: false)
        var rng = SeededGenerator(state: seed)
        var tree = FolderTree(database: database)
        var updated = 0
        for step in 0..<300 {
            let folders = database.metadata(ofType: Folder.recordType).map { $0.recordID }.sorted()
            var saving: [Record] = []
            var deleting: [RecordID] = []
            switch rng.next() % 10 {
            case 0..<6:
                var record = Record(recordType: Folder.recordType, recordID: id("f\(step)"))
                record["name"] = .string("f\(step)")
                if !folders.isEmpty, rng.next() % 4 != 0 {
                    record["parent"] = .reference(
                        Reference(recordID: folders[Int(rng.next() % UInt64(folders.count))], action: .deleteSelf))
                }
                saving.append(record)
            case 6..<8 where !folders.isEmpty:
                var record = try database.record(for: folders[Int(rng.next() % UInt64(folders.count))])
                let parent = folders[Int(rng.next() % UInt64(folders.count))]
                record["parent"] = rng.next() % 3 == 0 ? nil : FieldValue.reference(Reference(recordID: parent, action: .deleteSelf))
                saving.append(record)
            default:
                guard !folders.isEmpty else { continue }
                deleting.append(folders[Int(rng.next() % UInt64(folders.count))])
            }
            func commit(_ saving: [Record], _ deleting: [RecordID]) throws {
                let result = try database.modify(saving: saving, deleting: deleting)
                let saved = result.savedRecords.compactMap { database.metadata(for: $0.recordID) }
                // A deleted record that is no folder of the tree (a note, most of the time) changes nothing.
                let deleted = result.deletedRecordIDs + [id("note\(step)")]
                if tree.update(saving: saved, deleting: deleted) {
                    updated += 1
                    // The same change applied again to the tree that has it changes nothing (a
                    // rename's plan applies the changes since the index's token to a later tree).
                    var again = tree
                    #expect(again.update(saving: saved, deleting: deleted) && again == tree, "step \(step), again")
                } else {
                    tree = FolderTree(database: database)
                }
                #expect(tree == FolderTree(database: database), "step \(step)")
            }
            try commit(saving, deleting)
            // Every seventh step a folder is also saved where it is (a new name, as a new mtime
            // saves one at every entry change in it), without drawing from the generator.
            if step % 7 == 0, let first = database.metadata(ofType: Folder.recordType).map(\.recordID).min() {
                var record = try database.record(for: first)
                record["name"] = .string("renamed \(step)")
                try commit([record], [])
            }
        }
        #expect(updated > 50)  // the common steps are incremental (none is once a move made a cycle)
    }

    /// Placing folders by walking up from each, as ``FolderContents`` does while it needs no whole
    /// tree, places every folder and item as the whole tree does: after every step of a seeded run
    /// whose moves make cycles and whose parents may be notes or deleted records (dangling), asked
    /// in a random order, by a fresh instance and by one that keeps its walks.
    @Test(arguments: [4, 5, 6])
    func walksUpPlaceAsTheWholeTree(seed: UInt64) throws {
        let path = makeTemporaryDirectory("notesfs-tree")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let database = try RecordDatabase(path: path, backgroundThread: false)
        var rng = SeededGenerator(state: seed)
        var kept = FolderContents(database: database)
        var (walkedToRecovered, walkedToFolder) = (0, 0)
        for step in 0..<200 {
            let folders = database.metadata(ofType: Folder.recordType).map { $0.recordID }.sorted()
            let notes = database.metadata(ofType: Note.recordType).map { $0.recordID }.sorted()
            func pick(_ ids: [RecordID]) -> RecordID { ids[Int(rng.next() % UInt64(ids.count))] }
            func parent() -> FieldValue? {
                switch rng.next() % 8 {
                case 0: return nil
                case 1 where !notes.isEmpty: return .reference(Reference(recordID: pick(notes), action: .none))
                default: return folders.isEmpty ? nil : .reference(Reference(recordID: pick(folders), action: .none))
                }
            }
            var record: Record
            var deleting: [RecordID] = []
            switch rng.next() % 12 {
            case 0..<5:
                record = Record(recordType: Folder.recordType, recordID: id("f\(step)"))
                record["name"] = .string("f\(step)")
                record["parent"] = parent()
            case 5..<7:
                record = Record(recordType: Note.recordType, recordID: id("n\(step)"))
                record["title"] = .string("n\(step)")
                record["folder"] = parent()
            default:
                guard !folders.isEmpty else { continue }
                record = try database.record(for: pick(folders))
                record["parent"] = parent()
                // Deleted instead: what referred to it with no action now dangles.
                if rng.next() % 3 == 0 { deleting = [pick(folders + notes)] }
            }
            _ = try database.modify(saving: deleting.isEmpty ? [record] : [], deleting: deleting)
            kept.invalidate()
            if rng.next() % 5 == 0 { kept = FolderContents(database: database) }
            let tree = FolderTree(database: database)
            let fresh = FolderContents(database: database)
            var asked = database.metadata(ofType: Folder.recordType) + database.metadata(ofType: Note.recordType)
            asked.shuffle(using: &rng)
            for metadata in asked {
                let whole = tree.placement(of: metadata)
                #expect(fresh.placement(of: metadata) == whole, "step \(step): \(metadata.recordID.recordName)")
                #expect(kept.placement(of: metadata) == whole, "step \(step): \(metadata.recordID.recordName)")
                if metadata.recordType == Folder.recordType {
                    if whole == .recovered { walkedToRecovered += 1 }
                    if case .folder = whole { walkedToFolder += 1 }
                }
            }
            #expect(fresh.placement(ofFolder: id("missing")) == nil)
            if let note = notes.first { #expect(fresh.placement(ofFolder: note) == nil) }
        }
        #expect(walkedToRecovered > 20 && walkedToFolder > 20)  // both kinds of walk ran
    }
}
