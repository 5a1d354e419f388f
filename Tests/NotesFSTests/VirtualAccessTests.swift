/// The virtual trees give exactly the access the notes and their folders give: on a mount with
/// `allow_other`, another user learns nothing of a private note through `.search`, `.recent` or
/// `.history` (names, versions, text), and the owner still finds everything. The other users are
/// real processes run with `setpriv` under other uids.

import Foundation
import Glibc
import Notes
import RecordStore
import TestSupport
import Testing

/// Runs `command` with `sh -c` as uid:gid `id` with no supplementary groups.
private func shAs(_ id: uid_t, _ command: String, groups: [gid_t] = []) throws -> ProgramResult {
    let groupOption = groups.isEmpty ? "--clear-groups" : "--groups=" + groups.map(String.init).joined(separator: ",")
    return try run(["/usr/bin/setpriv", "--reuid=\(id)", "--regid=\(id)", groupOption, "/bin/sh", "-c", command])
}

private func lines(_ result: ProgramResult) -> [String] { result.out.split(separator: "\n").map(String.init).sorted() }

/// A folder `name` at the root owned by `uid`:`gid` with `mode`, saved; its record as saved.
private func saveOwnedFolder(_ db: RecordDatabase, _ name: String, mode: UInt32, uid: UInt32, gid: UInt32) throws -> Record {
    var folder = Folder(name: name)
    folder.ownership = Ownership(mode: mode, uid: uid, gid: gid)
    return try db.modify(saving: [folder.record]).savedRecords[0]
}

/// A note `title` with `text`, owned by `uid`:`uid` with `mode`, in `folder`, and one older version of it.
private func savePrivateNote(_ db: RecordDatabase, _ title: String, _ text: String, folder: RecordID?, uid: UInt32, mode: UInt32)
    throws -> Note
{
    var note = Note(title: title, text: "an older text about zymurgy", folder: folder)
    note.ownership = Ownership(mode: mode, uid: uid, gid: uid)
    let saved = try db.modify(saving: [note.record]).savedRecords[0]
    var edited = saved
    edited["text"] = .string(text)
    let version = Version(of: saved, kind: .edit)
    try db.modify(saving: [edited, version.record])
    return try Note(record: try db.record(for: saved.recordID))
}

@Suite(.tags(.mount), .needsFUSE, .serialized) struct VirtualAccessTests {
    static let owner: uid_t = 1000
    static let stranger: uid_t = 1001

    /// `.tags` names a tag only to a user who may find a note that has it (or a tag under it):
    /// a private note's tags are as private as its text.
    @Test func anotherUserIsToldNoTagOfAPrivateNote() throws {
        try withNotesMount(
            mountOptions: ["allow_other"],
            seed: { db in
                _ = try savePrivateNote(db, "Plans", "#merger/acme and #shared", folder: nil, uid: Self.owner, mode: 0o600)
                var open = Note(title: "Open", text: "#shared #open/topic")
                open.ownership = Ownership(mode: 0o644, uid: Self.owner, gid: Self.owner)
                try db.modify(saving: [open.record])
            }
        ) { m in
            let tags = shellQuoted(m.root + "/.tags")
            let ownerSees = try lines(shAs(Self.owner, "ls \(tags)"))
            let ownerNested = try lines(shAs(Self.owner, "ls \(tags)/merger"))
            let strangerSees = try lines(shAs(Self.stranger, "ls \(tags)"))
            let strangerShared = try lines(shAs(Self.stranger, "ls \(tags)/shared"))
            let strangerPrivate = try shAs(Self.stranger, "ls \(tags)/merger").status
            let strangerNested = try shAs(Self.stranger, "stat \(tags)/merger/acme").status
            #expect(ownerSees == ["merger", "open", "shared"])
            #expect(ownerNested == ["acme"])
            #expect(strangerSees == ["open", "shared"])
            #expect(strangerShared == ["Open.md"])
            #expect(strangerPrivate != 0)
            #expect(strangerNested != 0)
        }
    }

    @Test func anotherUserIsToldNothingOfAPrivateNote() throws {
        try withNotesMount(
            mountOptions: ["allow_other"],
            seed: { db in
                let saved = try saveOwnedFolder(db, "P", mode: 0o700, uid: Self.owner, gid: Self.owner)
                _ = try savePrivateNote(db, "B", "secret zymurgy plans", folder: saved.recordID, uid: Self.owner, mode: 0o600)
                // Readable folder, private note: its name shows by walking, but not its text.
                _ = try savePrivateNote(db, "Hidden", "zymurgy too", folder: nil, uid: Self.owner, mode: 0o600)
                var open = Note(title: "Open", text: "public zymurgy")
                open.ownership = Ownership(mode: 0o644, uid: Self.owner, gid: Self.owner)
                try db.modify(saving: [open.record])
            }
        ) { m in
            let root = shellQuoted(m.root)
            // The owner finds all three.
            #expect(try lines(shAs(Self.owner, "ls \(root)/.search/zymurgy")) == ["B.md", "Hidden.md", "Open.md"])
            #expect(try lines(shAs(Self.owner, "ls \(root)/.recent")) == ["B.md", "Hidden.md", "Open.md"])
            #expect(try shAs(Self.owner, "cat \(root)/.history/P/B.md/*").out == "an older text about zymurgy")
            // Another user: only the open note, and no version of a private one.
            #expect(try lines(shAs(Self.stranger, "ls \(root)/.search/zymurgy")) == ["Open.md"])
            #expect(try lines(shAs(Self.stranger, "ls \(root)/.search/secret")) == [])
            #expect(try lines(shAs(Self.stranger, "ls \(root)/.recent")) == ["Open.md"])
            #expect(try shAs(Self.stranger, "stat \(root)/.search/zymurgy/B.md").status != 0)
            #expect(try shAs(Self.stranger, "stat \(root)/.search/zymurgy/Hidden.md").status != 0)
            #expect(try shAs(Self.stranger, "ls \(root)/.history/P").status != 0, "P is 0700")
            let cat = try shAs(Self.stranger, "cat \(root)/.history/P/B.md/* \(root)/.history/Hidden.md/*")
            #expect(cat.status != 0)
            #expect(!cat.out.contains("zymurgy"))
            #expect(try !lines(shAs(Self.stranger, "ls \(root)/.history")).contains("Hidden.md"))
            #expect(try lines(shAs(Self.stranger, "ls \(root)/.history")) == ["P"], "P shows by walking the root; its contents do not")
            // What the version files show: the note's owner and its read bits.
            var st = stat()
            #expect(stat(m.path(".history/Hidden.md"), &st) == 0)
            #expect(st.st_uid == Self.owner && st.st_mode & 0o7777 == 0o500)
            let version = try #require(listing(m.path(".history/Hidden.md"))?.first)
            #expect(stat(m.path(".history/Hidden.md/" + version), &st) == 0)
            #expect(st.st_uid == Self.owner && st.st_mode & 0o7777 == 0o400)
            #expect(stat(m.path(".history/P"), &st) == 0)
            #expect(st.st_uid == Self.owner && st.st_mode & 0o7777 == 0o500)
        }
    }

    /// A deleted note's versions keep the access it had (its last version's mode and owner).
    @Test func aDeletedPrivateNotesVersionsStayPrivate() throws {
        try withNotesMount(
            mountOptions: ["allow_other"],
            seed: { db in
                let gone = try savePrivateNote(db, "Gone", "deleted zymurgy", folder: nil, uid: Self.owner, mode: 0o600)
                let record = try db.record(for: gone.record.recordID)
                try db.modify(saving: [Version(of: record, kind: .delete).record], deleting: [record.recordID])
            }
        ) { m in
            let root = shellQuoted(m.root)
            let ownerSees = try shAs(Self.owner, "ls \(root)/.history")
            let strangerSees = try shAs(Self.stranger, "ls \(root)/.history")
            let strangerReads = try shAs(Self.stranger, "cat \(root)/.history/Gone.md/*")
            #expect(lines(ownerSees) == ["Gone.md"])
            #expect(lines(strangerSees) == [])
            #expect(strangerReads.status != 0 && !strangerReads.out.contains("zymurgy"))
            #expect(try shAs(Self.owner, "cat \(root)/.history/Gone.md/*").out.contains("zymurgy"))
        }
    }

    /// Names of search hits are made from what the caller sees: a hit of the caller's own never
    /// gets a folder suffix because a private note of the same name matches too.
    @Test func aHitsNameDoesNotTellOfAPrivateNoteOfTheSameName() throws {
        try withNotesMount(
            mountOptions: ["allow_other"],
            seed: { db in
                let p = try saveOwnedFolder(db, "P", mode: 0o700, uid: Self.owner, gid: Self.owner)
                _ = try savePrivateNote(db, "Plan", "quokka secret", folder: p.recordID, uid: Self.owner, mode: 0o600)
                let m = try saveOwnedFolder(db, "mine", mode: 0o755, uid: Self.stranger, gid: Self.stranger)
                _ = try savePrivateNote(db, "Plan", "quokka mine", folder: m.recordID, uid: Self.stranger, mode: 0o644)
            }
        ) { m in
            let root = shellQuoted(m.root)
            let owner = try shAs(Self.owner, "ls \(root)/.search/quokka")
            let stranger = try shAs(Self.stranger, "ls \(root)/.search/quokka")
            #expect(lines(owner) == ["Plan (P).md", "Plan (mine).md"])
            #expect(lines(stranger) == ["Plan.md"])
        }
    }

    /// A note deleted with its private folder: its versions are its owner's alone (the folder's
    /// access is gone with it).
    @Test func versionsOfANoteDeletedWithItsPrivateFolderStayPrivate() throws {
        try withNotesMount(
            mountOptions: ["allow_other"],
            seed: { db in
                let folder = try saveOwnedFolder(db, "Secret", mode: 0o700, uid: Self.owner, gid: Self.owner)
                let note = try savePrivateNote(db, "Plan", "wombat plans", folder: folder.recordID, uid: Self.owner, mode: 0o644)
                let record = try db.record(for: note.record.recordID)
                try db.modify(saving: [Version(of: record, kind: .delete).record], deleting: [folder.recordID])
            }
        ) { m in
            let root = shellQuoted(m.root)
            let ownerSees = try shAs(Self.owner, "ls \(root)/.history/Recovered")
            let strangerSees = try shAs(Self.stranger, "ls \(root)/.history/Recovered")
            let strangerReads = try shAs(Self.stranger, "cat \(root)/.history/Recovered/Plan.md/*")
            #expect(lines(ownerSees) == ["Plan.md"])
            #expect(lines(strangerSees) == [])
            #expect(!strangerReads.out.contains("wombat"))
        }
    }

    /// A note with a POSIX ACL counts as its owner's alone in the virtual trees.
    @Test func aNoteWithAnACLIsItsOwnersAloneInTheVirtualTrees() throws {
        try withNotesMount(
            mountOptions: ["allow_other"],
            seed: { db in
                _ = try savePrivateNote(db, "Diary", "numbat days", folder: nil, uid: Self.owner, mode: 0o644)
            }
        ) { m in
            let root = shellQuoted(m.root)
            let before = try shAs(Self.stranger, "ls \(root)/.search/numbat")
            #expect(lines(before) == ["Diary.md"], "0644: readable by all")
            let denied = try run(["/usr/bin/setfacl", "-m", "u:\(Self.stranger):---", m.path("Diary.md")])
            #expect(denied.status == 0, "\(denied)")
            let direct = try shAs(Self.stranger, "cat \(root)/Diary.md")
            let search = try shAs(Self.stranger, "ls \(root)/.search/numbat")
            let history = try shAs(Self.stranger, "cat \(root)/.history/Diary.md/*")
            #expect(direct.status != 0, "the kernel enforces the ACL on the note")
            #expect(lines(search) == [])
            #expect(!history.out.contains("numbat"))
            #expect(lines(try shAs(Self.owner, "ls \(root)/.search/numbat")) == ["Diary.md"])
        }
    }

    @Test func aGroupMemberSeesWhatTheGroupBitsGive() throws {
        try withNotesMount(
            mountOptions: ["allow_other"],
            seed: { db in
                let saved = try saveOwnedFolder(db, "Team", mode: 0o750, uid: Self.owner, gid: 2000)
                var note = Note(title: "Shared", text: "quorum notes", folder: saved.recordID)
                note.ownership = Ownership(mode: 0o640, uid: Self.owner, gid: 2000)
                try db.modify(saving: [note.record])
            }
        ) { m in
            let query = "ls \(shellQuoted(m.root))/.search/quorum"
            let member = try shAs(Self.stranger, query, groups: [2000])
            let outsider = try shAs(Self.stranger, query)
            #expect(lines(member) == ["Shared.md"])
            #expect(lines(outsider) == [])
        }
    }

    /// What a listing tells a user follows every chmod, chown and chgrp of a note or of a folder
    /// above it at once, and depends on the user's supplementary groups, not only its uid and
    /// gid: asked again and again between changes (the answers are kept until the next change).
    @Test func whatAListingTellsFollowsModesOwnersAndGroups() throws {
        try withNotesMount(
            mountOptions: ["allow_other"],
            seed: { db in
                let saved = try saveOwnedFolder(db, "Team", mode: 0o755, uid: Self.owner, gid: Self.owner)
                for title in ["A", "B"] {
                    var note = Note(title: title, text: "dingo \(title)", folder: saved.recordID)
                    note.ownership = Ownership(mode: 0o644, uid: Self.owner, gid: Self.owner)
                    try db.modify(saving: [note.record])
                }
                var top = Note(title: "C", text: "dingo at the top")
                top.ownership = Ownership(mode: 0o644, uid: Self.owner, gid: Self.owner)
                try db.modify(saving: [top.record])
            }
        ) { m in
            let search = shellQuoted(m.path(".search/dingo"))
            func strangerSees(groups: [gid_t] = []) throws -> [String] {
                let names = try lines(shAs(Self.stranger, "ls \(search)", groups: groups))
                let long = try shAs(Self.stranger, "ls -l \(search) | grep -c ' -> '", groups: groups)
                #expect(Int(long.out.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0 == names.count, "ls -l: \(long)")
                return names
            }
            let seen1 = try strangerSees()
            #expect(seen1 == ["A.md", "B.md", "C.md"])
            #expect(chmod(m.path("Team/A.md"), 0o600) == 0)
            let seen2 = try strangerSees()
            #expect(seen2 == ["B.md", "C.md"])
            #expect(try shAs(Self.stranger, "stat \(search)/A.md").status != 0)
            #expect(chown(m.path("Team/A.md"), Self.stranger, Self.stranger) == 0)
            let seen3 = try strangerSees()
            #expect(seen3 == ["A.md", "B.md", "C.md"])
            #expect(chmod(m.path("Team"), 0o700) == 0)
            let seen4 = try strangerSees()
            #expect(seen4 == ["C.md"])
            #expect(try shAs(Self.stranger, "stat \(search)/B.md").status != 0)
            #expect(chown(m.path("Team"), Self.owner, 2000) == 0)
            #expect(chmod(m.path("Team"), 0o750) == 0)
            let seen5 = try strangerSees(groups: [2000])
            #expect(seen5 == ["A.md", "B.md", "C.md"])
            let seen6 = try strangerSees()
            #expect(seen6 == ["C.md"])
            let seen7 = try strangerSees(groups: [2000, 3000])
            #expect(seen7 == ["A.md", "B.md", "C.md"])
            let seen8 = try strangerSees(groups: [3000])
            #expect(seen8 == ["C.md"])
            #expect(try shAs(Self.stranger, "stat \(search)/B.md", groups: [3000]).status != 0)
            #expect(try shAs(Self.stranger, "stat \(search)/B.md", groups: [2000]).status == 0)
        }
    }
}
