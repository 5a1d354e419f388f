/// Rename over an existing file follows POSIX for everything `stat` shows (the source's inode,
/// mode, owner and content), keeps the replaced file's bytes for descriptors open on it, and keeps
/// the target's record (recordName, creationDate) in the store, across a remount.

import Foundation
import Glibc
import Notes
import RecordStore
import TestSupport
import Testing

@Suite(.tags(.mount), .needsFUSE) struct RenameOverTests {
    /// `mv secret.md public.md`, secret.md root's 0600 and public.md nobody's 0644.
    @Test func aPrivateSourceOverAPublicTargetShowsTheSourcesOwnerModeAndInode() throws {
        try withDatabaseDirectory { db in
            var (publicName, created, sourceInode) = ("", Date?.none, ino_t(0))
            try withNotesMount(databasePath: db) { m in
                #expect(writeFile(m.path("secret.md"), "the secret\n", mode: 0o600) == 0)
                #expect(chown(m.path("secret.md"), 0, 0) == 0)
                #expect(chmod(m.path("secret.md"), 0o600) == 0)
                #expect(writeFile(m.path("public.md"), "public text\n") == 0)
                #expect(chown(m.path("public.md"), 65534, 65534) == 0)
                #expect(chmod(m.path("public.md"), 0o644) == 0)
                publicName = try #require(recordName(m.path("public.md")))
                created = note(m.database, recordName: publicName)?.creationDate
                let source = try #require(statOf(m.path("secret.md")).0)
                let target = try #require(statOf(m.path("public.md")).0)
                sourceInode = source.st_ino
                let fd = open(m.path("public.md"), O_RDONLY)
                #expect(fd >= 0)
                defer { close(fd) }

                #expect(rename(m.path("secret.md"), m.path("public.md")) == 0)

                let shown = try #require(statOf(m.path("public.md")).0)
                #expect(shown.st_ino == source.st_ino)
                #expect(shown.st_ino != target.st_ino)
                #expect(shown.st_uid == 0 && shown.st_gid == 0)
                #expect(shown.st_mode == S_IFREG | 0o600)
                #expect(readFile(m.path("public.md")) == "the secret\n")
                #expect(statOf(m.path("secret.md")).1 == ENOENT)
                // The descriptor open on the replaced file reads its old bytes, as on any POSIX fs.
                var buffer = [UInt8](repeating: 0, count: 64)
                let count = pread(fd, &buffer, 64, 0)
                #expect(count == 12)
                #expect(String(decoding: buffer.prefix(max(0, count)), as: UTF8.self) == "public text\n")
                // In the store: one note, the target's record, with the source's content and owner.
                #expect(fileRecordCount(m.database) == 1)
                #expect(recordName(m.path("public.md")) == publicName)
                let stored = try #require(note(m.database, recordName: publicName))
                #expect(stored.text == "the secret\n")
                #expect(stored.title == "public")
                #expect(stored.creationDate == created)
                #expect(stored.identity == UInt64(source.st_ino))
                let record = try m.database.record(for: RecordID(recordName: publicName))
                #expect(record["uid"]?.int64Value == 0)
                #expect(record["mode"]?.int64Value == 0o600)
            }
            try withNotesMount(databasePath: db) { m in
                let shown = try #require(statOf(m.path("public.md")).0)
                #expect(shown.st_ino == sourceInode)
                #expect(shown.st_uid == 0)
                #expect(shown.st_mode == S_IFREG | 0o600)
                #expect(readFile(m.path("public.md")) == "the secret\n")
                #expect(recordName(m.path("public.md")) == publicName)
                #expect(note(m.database, recordName: publicName)?.creationDate == created)
            }
        }
    }

    @Test func aSourceOpenForWritingKeepsSavingIntoTheTargetRecord() throws {
        try withNotesMount { m in
            #expect(writeFile(m.path("a.md"), "target") == 0)
            #expect(writeFile(m.path("b.md"), "source") == 0)
            let targetName = try #require(recordName(m.path("a.md")))
            let fd = open(m.path("b.md"), O_WRONLY | O_APPEND)
            #expect(fd >= 0)
            #expect(rename(m.path("b.md"), m.path("a.md")) == 0)
            #expect(write(fd, " and more", 9) == 9)
            #expect(close(fd) == 0)
            #expect(readFile(m.path("a.md")) == "source and more")
            #expect(note(m.database, recordName: targetName)?.text == "source and more")
            #expect(fileRecordCount(m.database) == 1)
        }
    }

    /// Another process renames one note over another (the store's identity transfer): the mount
    /// shows the target name with the source's inode and nothing under the replaced one.
    @Test func aRenameOverByAnotherProcessShowsInTheMount() throws {
        try withNotesMount { m in
            #expect(writeFile(m.path("kept.md"), "old") == 0)
            #expect(writeFile(m.path("moved.md"), "new") == 0)
            let sourceInode = try #require(statOf(m.path("moved.md")).0).st_ino
            #expect(readFile(m.path("kept.md")) == "old")  // the kernel caches the old inode's name and pages
            let other = try openDatabase(m.databasePath)
            defer { try? other.close() }
            let target = try #require(note(other, titled: "kept"))
            let source = try #require(note(other, titled: "moved"))
            var record = try other.record(for: target.record.recordID)
            record["text"] = .string("new")
            record.takeIdentity(try #require(source.identity))
            _ = try other.modify(saving: [record], deleting: [source.record.recordID])
            let seen = eventually(5) {
                statOf(m.path("kept.md")).0?.st_ino == sourceInode && statOf(m.path("moved.md")).1 == ENOENT
            }
            #expect(seen)
            #expect(listing(m.root) == ["kept.md"])
            #expect(readFile(m.path("kept.md")) == "new")
        }
    }
}
