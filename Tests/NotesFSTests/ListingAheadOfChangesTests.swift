/// A listing built while the store is ahead of the mount: another process moved a note, the mount
/// reads that commit while it builds a folder's listing (its store catches up during the build),
/// and applies the change after. The note must leave the listing it was in (seen in a sync test:
/// `ThreeMountTests`, A's root kept a note B had moved into `Work`). The mount has no store
/// watcher, so the moment is there every time.

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
