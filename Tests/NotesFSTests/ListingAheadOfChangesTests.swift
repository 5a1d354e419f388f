/// A listing built while the store is ahead of the mount's listings: a commit of this process (the
/// sync's writer) moved a note while a request built the listing of the folder it moved into, and
/// the change is applied after that request. The note must leave the listing it was in (seen in a
/// sync test: `ThreeMountTests`, A's root kept a note B had moved into `Work`). The test builds the
/// listing under the state lock between the commit and the change's application, so the moment is
/// there every time; without a store watcher nothing else catches the mount up meanwhile.
import FUSE
import Foundation
import Glibc
import Notes
import RecordStore
import TestSupport
import Testing

@testable import NotesFS

@Suite(.tags(.mount), .needsFUSE) struct ListingAheadOfChangesTests {
    @Test func aFolderListedBeforeAMoveIsAppliedTakesTheNoteFromTheListingItLeft() throws {
        var noteID: RecordID?
        var workID: RecordID?
        try withNotesMount(
            storeWatcher: false,
            seed: { db in
                workID = try saveFolder(db, name: "Work").recordID
                noteID = try saveNote(db, title: "Plan", text: "x").recordID
            }
        ) { m in
            #expect(listing(m.root) == ["Plan.md", "Work"])
            let (id, work) = (try #require(noteID), try #require(workID))
            // A commit of this process (the sync's writer) lands while a request builds `Work`'s
            // listing: the store has the move, the mount has not applied it yet.
            var moved = try m.database.record(for: id)
            moved["folder"] = .reference(Reference(recordID: work, action: .deleteSelf))
            try m.database.modify(saving: [moved])
            let workInode = try #require(m.database.metadata(for: work)?.identity)
            m.fileSystem.state.withLock { state in _ = try? m.fileSystem.listing(workInode, &state) }
            #expect(listing(m.root) == ["Work"])
            #expect(listing(m.path("Work")) == ["Plan.md"])
            let inode = try #require(m.database.metadata(for: id)?.identity)
            #expect(m.fileSystem.state.withLock { $0.names.listingViolations(of: [inode]) } == [])
        }
    }
}
