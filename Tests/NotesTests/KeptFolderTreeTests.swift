import Foundation
import RecordStore
import TestSupport
import Testing

@testable import Notes

/// The text indexer's folder tree, kept from one catch-up to the next and for the rename plans
/// made on the index between them (``NotesSearchIndex/tree(after:from:)``).
@Suite struct KeptFolderTreeTests {
    /// A catch-up whose changes a later commit overtook (a storm of renames: the next rename
    /// commits while the indexer reads) still gives and keeps the tree at the changes' token: it
    /// is the kept tree updated by the changes. It was dropped, and the plans that followed walked
    /// every folder above each record they placed.
    @Test func aCatchUpOvertakenByACommitKeepsItsTree() async throws {
        let notes = try makeManager()
        let work = try await notes.newFolder(name: "Work")
        let home = try await notes.newFolder(name: "Home")
        _ = try await notes.save(note: Note(title: "a", text: "one", folder: work.recordID))
        let index = NotesSearchIndex(database: notes.database)
        try index.catchUp()
        _ = try await notes.save(note: Note(title: "b", text: "two", folder: work.recordID))
        try index.catchUp()
        let token = try #require(index.keptTreeToken)
        #expect(token == notes.database.currentToken)

        // Changes since the kept tree: a new folder under Home and a note in it...
        let sub = try await notes.newFolder(name: "Sub", parent: home)
        _ = try await notes.save(note: Note(title: "c", text: "three", folder: sub.recordID))
        let changes = try notes.database.changes(since: token)
        // ...then a commit the catch-up has not read.
        _ = try await notes.save(note: Note(title: "d", text: "four", folder: work.recordID))
        #expect(notes.database.currentToken != changes.token)

        let tree = try #require(index.tree(after: changes, from: token))
        #expect(tree.placement(ofFolder: sub.recordID) == .folder(home.recordID))
        #expect(tree.placement(ofFolder: work.recordID) == .root)
        #expect(index.keptTreeToken == changes.token)
        // A plan made before the catch-up commits reads the index's old token: it starts from the
        // kept tree, of a later token, and applies every change since the index's token.
        let planned = try notes.database.changes(since: token)
        let forPlan = try #require(index.treeForReading(after: planned, from: token))
        #expect(forPlan.placement(ofFolder: sub.recordID) == .folder(home.recordID))
        // The tree read from the store at that token places every folder the same way.
        let read = FolderTree(database: notes.database)
        for folder in [work, home, sub] { #expect(tree.placement(ofFolder: folder.recordID) == read.placement(ofFolder: folder.recordID)) }
    }
}
