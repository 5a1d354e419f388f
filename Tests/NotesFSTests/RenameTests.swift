/// rename(2) and renameat2(2): records keep their identity; rename onto a note is an atomic replace.

import Foundation
import Glibc
import Notes
import RecordStore
import TestSupport
import Testing

@Suite(.tags(.mount), .needsFUSE) struct RenameTests {
    @Test func renameWithinAFolderChangesTheTitle() throws {
        try withNotesMount { m in
            #expect(writeFile(m.path("old.md"), "text") == 0)
            let name = recordName(m.path("old.md"))
            let inode = statOf(m.path("old.md")).0?.st_ino
            let created = try #require(note(m.database, titled: "old")?.creationDate)
            #expect(rename(m.path("old.md"), m.path("new title.md")) == 0)
            #expect(statOf(m.path("old.md")).1 == ENOENT)
            #expect(recordName(m.path("new title.md")) == name)
            #expect(statOf(m.path("new title.md")).0?.st_ino == inode)
            let renamed = try #require(note(m.database, recordName: name ?? ""))
            #expect(renamed.title == "new title")
            #expect(renamed.text == "text")
            #expect(renamed.creationDate == created)
            #expect(fileRecordCount(m.database) == 1)
        }
    }

    @Test func moveAcrossFolders() throws {
        try withNotesMount { m in
            #expect(mkdir(m.path("A"), 0o755) == 0)
            #expect(mkdir(m.path("B"), 0o755) == 0)
            #expect(writeFile(m.path("A/n.md"), "moving") == 0)
            let name = try #require(recordName(m.path("A/n.md")))
            #expect(rename(m.path("A/n.md"), m.path("B/n.md")) == 0)
            #expect(listing(m.path("A")) == [])
            #expect(listing(m.path("B")) == ["n.md"])
            #expect(recordName(m.path("B/n.md")) == name)
            let b = m.database.queryMetadata(Query(recordType: Folder.recordType)).first { $0.record["name"]?.stringValue == "B" }
            #expect(note(m.database, recordName: name)?.folder == b?.recordID)
            // And to the root.
            #expect(rename(m.path("B/n.md"), m.path("n.md")) == 0)
            #expect(note(m.database, recordName: name)?.folder == nil)
            #expect(readFile(m.path("n.md")) == "moving")
            #expect(fileRecordCount(m.database) == 1)
        }
    }

    @Test func moveAWholeFolder() throws {
        try withNotesMount { m in
            #expect(mkdir(m.path("A"), 0o755) == 0)
            #expect(mkdir(m.path("A/Inner"), 0o755) == 0)
            #expect(mkdir(m.path("B"), 0o755) == 0)
            #expect(writeFile(m.path("A/Inner/n.md"), "in a tree") == 0)
            let name = try #require(recordName(m.path("A/Inner/n.md")))
            let folderName = try #require(recordName(m.path("A")))
            let inode = statOf(m.path("A")).0?.st_ino
            #expect(rename(m.path("A"), m.path("B/Moved")) == 0)
            #expect(statOf(m.path("A")).1 == ENOENT)
            #expect(recordName(m.path("B/Moved")) == folderName)
            #expect(statOf(m.path("B/Moved")).0?.st_ino == inode)
            #expect(readFile(m.path("B/Moved/Inner/n.md")) == "in a tree")
            #expect(recordName(m.path("B/Moved/Inner/n.md")) == name)
            let folder = try Folder(record: m.database.record(for: RecordID(recordName: folderName)))
            #expect(folder.name == "Moved")
            #expect(folder.parent?.recordName == recordName(m.path("B")))
        }
    }

    @Test func renameOntoAnExistingNoteKeepsTheTargetRecordAndShowsTheSourceInode() throws {
        try withNotesMount { m in
            #expect(writeFile(m.path("target.md"), "old content") == 0)
            #expect(writeFile(m.path("source.md"), "new content") == 0)
            let targetName = try #require(recordName(m.path("target.md")))
            let targetInode = statOf(m.path("target.md")).0?.st_ino
            let sourceInode = statOf(m.path("source.md")).0?.st_ino
            let created = note(m.database, recordName: targetName)?.creationDate
            #expect(readFile(m.path("target.md")) == "old content")  // cached by the kernel
            #expect(rename(m.path("source.md"), m.path("target.md")) == 0)
            #expect(statOf(m.path("source.md")).1 == ENOENT)
            #expect(recordName(m.path("target.md")) == targetName)
            // POSIX: the name shows the moved file's inode; the store keeps the target record.
            #expect(statOf(m.path("target.md")).0?.st_ino == sourceInode)
            #expect(statOf(m.path("target.md")).0?.st_ino != targetInode)
            #expect(readFile(m.path("target.md")) == "new content")
            let target = note(m.database, recordName: targetName)
            #expect(target?.text == "new content")
            #expect(target?.title == "target")
            #expect(target?.creationDate == created)
            #expect(fileRecordCount(m.database) == 1)
            #expect(listing(m.root) == ["target.md"])
        }
    }

    @Test func targetIsUsableRightAfterRenameOntoIt() throws {
        // `mv new.md note.md && cat note.md`, `sed -i … && stat …`: the target must resolve at once,
        // not only after the kernel heard the invalidation.
        try withNotesMount { m in
            #expect(writeFile(m.path("note.md"), "v0") == 0)
            let name = recordName(m.path("note.md"))
            var failures: [String] = []
            for i in 1...50 {
                #expect(writeFile(m.path("new.md"), "v\(i)") == 0)
                _ = readFile(m.path("note.md"))  // the kernel caches note.md's dentry
                #expect(rename(m.path("new.md"), m.path("note.md")) == 0)
                let (st, statErrno) = statOf(m.path("note.md"))
                let text = readFile(m.path("note.md"))
                if st == nil || text != "v\(i)" { failures.append("round \(i): stat errno \(statErrno), read \(text.debugDescription)") }
            }
            #expect(failures.isEmpty, "\(failures.count) of 50 renames: \(failures.prefix(3))")
            #expect(recordName(m.path("note.md")) == name)
            #expect(fileRecordCount(m.database) == 1)
        }
    }

    @Test func renameNoReplaceRefusesAnExistingTarget() throws {
        try withNotesMount { m in
            #expect(writeFile(m.path("a.md"), "a") == 0)
            #expect(writeFile(m.path("b.md"), "b") == 0)
            #expect(renameErrno(m.path("a.md"), m.path("b.md"), flags: 1) == EEXIST)
            #expect(readFile(m.path("a.md")) == "a")
            #expect(readFile(m.path("b.md")) == "b")
            #expect(fileRecordCount(m.database) == 2)
            #expect(renameErrno(m.path("a.md"), m.path("c.md"), flags: 1) == 0)
            #expect(listing(m.root) == ["b.md", "c.md"])
        }
    }

    @Test func folderIntoItselfIsInvalid() throws {
        try withNotesMount { m in
            #expect(mkdir(m.path("A"), 0o755) == 0)
            #expect(mkdir(m.path("A/B"), 0o755) == 0)
            #expect(renameErrno(m.path("A"), m.path("A/B/A")) == EINVAL)
            #expect(renameErrno(m.path("A"), m.path("A/A")) == EINVAL)
            #expect(listing(m.path("A")) == ["B"])
            #expect(listing(m.path("A/B")) == [])
        }
    }

    @Test func renameErrors() throws {
        try withNotesMount { m in
            #expect(mkdir(m.path("dir"), 0o755) == 0)
            #expect(mkdir(m.path("full"), 0o755) == 0)
            #expect(writeFile(m.path("full/x.md"), "x") == 0)
            #expect(writeFile(m.path("f.md"), "f") == 0)
            #expect(renameErrno(m.path("missing.md"), m.path("x.md")) == ENOENT)
            #expect(renameErrno(m.path("dir"), m.path("full")) == ENOTEMPTY)
            #expect(renameErrno(m.path("f.md"), m.path("dir")) == EISDIR)
            #expect(renameErrno(m.path("dir"), m.path("f.md")) == ENOTDIR)
            #expect(renameErrno(m.path("f.md"), m.path("nowhere/f.md")) == ENOENT)
            // A directory onto an empty one replaces it.
            #expect(mkdir(m.path("empty"), 0o755) == 0)
            #expect(renameErrno(m.path("dir"), m.path("empty")) == 0)
            #expect(listing(m.root) == ["empty", "f.md", "full"])
            #expect(m.database.queryMetadata(Query(recordType: Folder.recordType)).count == 2)
        }
    }

    @Test func inodesAreStableAcrossRenameSaveAndRemount() throws {
        try withDatabaseDirectory { db in
            var inode: ino_t = 0
            var identity: UInt64 = 0
            try withNotesMount(databasePath: db) { m in
                #expect(writeFile(m.path("a.md"), "1") == 0)
                inode = try #require(statOf(m.path("a.md")).0?.st_ino)
                identity = try #require(note(m.database, titled: "a")?.identity)
                #expect(UInt64(inode) == identity)
                #expect(rename(m.path("a.md"), m.path("b.md")) == 0)
                #expect(statOf(m.path("b.md")).0?.st_ino == inode)
                #expect(writeFile(m.path("b.md"), "saved again, longer") == 0)
                #expect(statOf(m.path("b.md")).0?.st_ino == inode)
            }
            try withNotesMount(databasePath: db) { m in
                #expect(statOf(m.path("b.md")).0?.st_ino == inode)
                #expect(note(m.database, titled: "b")?.identity == identity)
            }
        }
    }
}
