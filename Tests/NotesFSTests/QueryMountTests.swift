/// `.query/PREDICATE` in the mount: the notes matching a predicate of `notesfs query`, front-matter
/// properties included, as symlinks; a predicate that does not parse is `EINVAL`.

import FUSE
import Foundation
import Notes
import RecordStore
import TestSupport
import Testing

@testable import NotesFS

@Suite struct QueryMountTests {
    static func seed(_ db: RecordDatabase) throws {
        let work = try db.modify(saving: [Folder(name: "Work").record]).savedRecords[0]
        _ = try db.modify(saving: [
            Note(title: "Plan", text: "---\nstatus: active\npriority: 3\ntags: [x]\n---\nthe plan\n", folder: work.recordID).record,
            Note(title: "Done", text: "---\nStatus: done\npriority: 1\n---\n").record,
            Note(title: "Plain", text: "no properties\n").record,
        ])
    }

    @Test(.tags(.mount), .needsFUSE) func queryDirectoriesListMatchingNotes() throws {
        try withNotesMount(seed: Self.seed) { m in
            #expect(listing(m.path(".query")) == [])
            #expect(listing(m.path(#".query/status == "active""#)) == ["Plan.md"])
            #expect(listing(m.path(".query/priority >= 1")) == ["Done.md", "Plan.md"])
            #expect(listing(m.path(#".query/"x" IN tags"#)) == ["Plan.md"])
            #expect(listing(m.path(#".query/status != "active""#)) == ["Done.md"])
            #expect(listing(m.path(#".query/title BEGINSWITH "P""#)) == ["Plain.md", "Plan.md"])
            #expect(linkTarget(m.path(#".query/status == "active"/Plan.md"#)) == "../../Work/Plan.md")
            #expect(readFile(m.path(#".query/status == "active"/Plan.md"#))?.hasSuffix("the plan\n") == true)
            // Written and listed at once.
            #expect(writeFile(m.path("New.md"), "---\nstatus: active\n---\n") == 0)
            #expect(listing(m.path(#".query/status == "active""#)) == ["New.md", "Plan.md"])
            // A predicate that does not parse.
            let refused = try sh("ls \(shellQuoted(m.path(".query/status ==="))) 2>&1")
            #expect(refused.status != 0)
            #expect(refused.out.contains("Invalid argument"))
        }
    }
}
