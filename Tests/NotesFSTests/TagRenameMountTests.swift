/// `mv .tags/old .tags/new` renames the tag in every note that has it, in one commit, nested
/// tags and front matter included; every other change under `.tags` stays `EROFS`.

import FUSE
import Foundation
import Notes
import RecordStore
import TestSupport
import Testing

@testable import NotesFS

@Suite struct TagRenameMountTests {
    /// Notes tagged `#project` in the text and the front matter, one nested, one `#projects`.
    static func seed(_ db: RecordDatabase) throws {
        let work = try db.modify(saving: [Folder(name: "Work").record]).savedRecords[0]
        _ = try db.modify(saving: [
            Note(title: "A", text: "#project and #project/alpha, `#project` is code\n").record,
            Note(title: "B", text: "---\ntags: [project, other]\n---\nbody\n", folder: work.recordID).record,
            Note(title: "C", text: "#projects #other\n").record,
        ])
    }

    @Test(.tags(.mount), .needsFUSE) func mvOfATagDirectoryRenamesTheTagInEveryNote() throws {
        try withNotesMount(seed: Self.seed) { m in
            #expect(listing(m.path(".tags")) == ["other", "project", "projects"])
            // Found by any spelling; a name no tag has is not there (so `mv` renames onto it).
            #expect(listing(m.path(".tags/PROJECT")) == ["A.md", "B.md", "alpha"])
            #expect(statOf(m.path(".tags/work")).1 == ENOENT)
            let reader = open(m.path("A.md"), O_RDONLY | O_CLOEXEC)  // a clean buffer, open across the rename
            defer { close(reader) }
            #expect(readFile(m.path("A.md"))?.hasPrefix("#project") == true)
            let before = try #require(statOf(m.path("A.md")).0)
            let result = try sh("mv \(shellQuoted(m.path(".tags/project"))) \(shellQuoted(m.path(".tags/work")))")
            #expect(result.status == 0, "\(result.out)")
            #expect(readFile(m.path("A.md")) == "#work and #work/alpha, `#project` is code\n")
            #expect(readFile(m.path("Work/B.md")) == "---\ntags: [work, other]\n---\nbody\n")
            #expect(readFile(m.path("C.md")) == "#projects #other\n")
            #expect(readAll(reader).map { String(decoding: $0, as: UTF8.self) } == "#work and #work/alpha, `#project` is code\n")
            let after = try #require(statOf(m.path("A.md")).0)
            #expect(nanoseconds(after.st_mtim) > nanoseconds(before.st_mtim))
            #expect(listing(m.path(".tags")) == ["other", "projects", "work"])
            #expect(listing(m.path(".tags/work")) == ["A.md", "B.md", "alpha"])
            #expect(statOf(m.path(".tags/project")).1 == ENOENT)

            // A nested tag, to another name under its parent.
            #expect(renameErrno(m.path(".tags/work/alpha"), m.path(".tags/work/beta")) == 0)
            #expect(readFile(m.path("A.md")) == "#work and #work/beta, `#project` is code\n")
            #expect(listing(m.path(".tags/work")) == ["A.md", "B.md", "beta"])

            // Onto an existing tag (`mv -T`; plain `mv` moves into it): the two merge.
            let merged = try sh("mv -T \(shellQuoted(m.path(".tags/projects"))) \(shellQuoted(m.path(".tags/other")))")
            #expect(merged.status == 0, "\(merged.out)")
            #expect(readFile(m.path("C.md")) == "#other #other\n")
            #expect(listing(m.path(".tags")) == ["other", "work"])
            #expect(listing(m.path(".tags/other")) == ["B.md", "C.md"])
        }
    }

    @Test(.tags(.mount), .needsFUSE) func everyOtherChangeUnderTagsIsReadOnly() throws {
        try withNotesMount(seed: Self.seed) { m in
            let touch = try sh("touch \(shellQuoted(m.path(".tags/x")))", mergingErrors: true)
            #expect(touch.status != 0 && touch.out.contains("Read-only file system"), "\(touch.out)")
            let rm = try sh("rm \(shellQuoted(m.path(".tags/project/A.md")))", mergingErrors: true)
            #expect(rm.status != 0 && rm.out.contains("Read-only file system"), "\(rm.out)")
            #expect(errnoOf { rmdir(m.path(".tags/other")) } == EROFS)
            #expect(errnoOf { mkdir(m.path(".tags/new"), 0o755) } == EROFS)
            #expect(renameErrno(m.path(".tags/project/A.md"), m.path(".tags/project/Z.md")) == EROFS, "a note's link")
            #expect(renameErrno(m.path(".tags/other"), m.path("other")) == EROFS, "out of .tags")
            #expect(renameErrno(m.path("Work"), m.path(".tags/Work")) == EROFS, "into .tags")
            #expect(renameErrno(m.path(".tags/other"), m.path(".tags/project"), flags: 2) == EROFS, "RENAME_EXCHANGE")
            #expect(renameErrno(m.path(".tags/other"), m.path(".tags/bad name")) == EINVAL, "no tag name")
            #expect(renameErrno(m.path(".tags/other"), m.path(".tags/projects"), flags: 1) == EEXIST, "RENAME_NOREPLACE")
            #expect(readFile(m.path("A.md")) == "#project and #project/alpha, `#project` is code\n")
            #expect(readFile(m.path("Work/B.md")) == "---\ntags: [project, other]\n---\nbody\n")
            #expect(listing(m.path(".tags")) == ["other", "project", "projects"])
        }
    }

    /// An editor's unsaved writes to a note the rename rewrites: the commit goes to the store, the
    /// buffer is not touched, its save meets the newer record (`ESTALE`) and its bytes are kept as
    /// a conflict copy.
    @Test(.tags(.mount), .needsFUSE) func aBufferWithUnsavedWritesIsNotOverwritten() throws {
        try withNotesMount(seed: Self.seed) { m in
            let mine = "mine, longer than the note: #other\n"
            let writer = try UnsavedWrites(m, "C.md", writing: mine)
            #expect(renameErrno(m.path(".tags/other"), m.path(".tags/misc")) == 0)
            let stored = try m.database.record(for: RecordID(recordName: try #require(recordName(m.path("C.md")))))
            #expect(stored[FieldName.text]?.stringValue == "#projects #misc\n")
            try writer.saveMeetingANewerRecord()
            let copy = "C (conflict \(ConflictName.day(Date())) \(ConflictName.hostName())).md"
            #expect(eventually(5) { listing(m.root)?.contains(copy) == true }, "\(listing(m.root) ?? [])")
            #expect(readFile(m.path(copy)) == mine)
            #expect(readFile(m.path("C.md")) == "#projects #misc\n")
            #expect(readFile(m.path("Work/B.md")) == "---\ntags: [project, misc]\n---\nbody\n")
        }
    }
}
