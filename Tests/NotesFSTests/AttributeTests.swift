/// stat fields, mtime (touch, utimensat), chmod/chown kept in the record, umask, xattrs.

import CFuse
import Foundation
import Glibc
import Notes
import RecordStore
import TestSupport
import Testing

@Suite(.tags(.mount), .needsFUSE) struct AttributeTests {
    @Test func statFields() throws {
        try withNotesMount { m in
            let before = Date().timeIntervalSince1970
            #expect(writeFile(m.path("s.md"), "12345", mode: 0o640) == 0)
            #expect(mkdir(m.path("d"), 0o750) == 0)
            let st = try #require(statOf(m.path("s.md")).0)
            #expect(st.st_size == 5)
            #expect(st.st_mode == S_IFREG | 0o640)
            #expect(st.st_uid == getuid())
            #expect(st.st_gid == getgid())
            #expect(st.st_nlink == 1)
            #expect(abs(Double(st.st_mtim.tv_sec) - before) < 10)
            let record = try #require(note(m.database, titled: "s"))
            #expect(UInt64(st.st_ino) == record.identity)
            let modified = try #require(record.modificationDate)
            #expect(abs(Double(st.st_mtim.tv_sec) + Double(st.st_mtim.tv_nsec) / 1e9 - modified.timeIntervalSince1970) < 0.001)
            let dir = try #require(statOf(m.path("d")).0)
            #expect(dir.st_mode == S_IFDIR | 0o750)
            #expect(dir.st_nlink == 2)
            let root = try #require(statOf(m.root).0)
            #expect(root.st_mode & S_IFMT == S_IFDIR)
            #expect(root.st_ino == 1)
            // Size follows the bytes (multi-byte text counts bytes).
            #expect(writeFile(m.path("s.md"), "héllo ✓") == 0)
            #expect(statOf(m.path("s.md")).0?.st_size == off_t("héllo ✓".utf8.count))
        }
    }

    @Test func touchSetsTheModificationDateAndItPersists() throws {
        try withDatabaseDirectory { db in
            try withNotesMount(databasePath: db) { m in
                #expect(writeFile(m.path("t.md"), "x") == 0)
                #expect(mkdir(m.path("dir"), 0o755) == 0)
                let result = try sh("touch -d '2001-02-03 04:05:06' t.md dir", in: m.root, environment: ["TZ": "UTC"])
                #expect(result.status == 0, "\(result)")
                #expect(note(m.database, titled: "t")?.modificationDate?.timeIntervalSince1970 == 981_173_106)
                #expect(statOf(m.path("t.md")).0?.st_mtim.tv_sec == 981_173_106)
                #expect(statOf(m.path("dir")).0?.st_mtim.tv_sec == 981_173_106)
                #expect(readFile(m.path("t.md")) == "x")
            }
            try withNotesMount(databasePath: db) { m in
                #expect(statOf(m.path("t.md")).0?.st_mtim.tv_sec == 981_173_106)
                #expect(statOf(m.path("dir")).0?.st_mtim.tv_sec == 981_173_106)
                #expect(note(m.database, titled: "t")?.modificationDate?.timeIntervalSince1970 == 981_173_106)
            }
        }
    }

    @Test(arguments: [123_456_789, 1, 999_999_999, 0])
    func utimensatNanosecondsReadBackExactly(nanoseconds: Int) throws {
        try withDatabaseDirectory { db in
            let seconds = 1_234_567_890
            try withNotesMount(databasePath: db) { m in
                #expect(writeFile(m.path("n.md"), "x") == 0)
                var times = [
                    timespec(tv_sec: seconds, tv_nsec: nanoseconds), timespec(tv_sec: seconds, tv_nsec: nanoseconds),
                ]
                #expect(utimensat(AT_FDCWD, m.path("n.md"), &times, 0) == 0)
                let st = try #require(statOf(m.path("n.md")).0)
                #expect(st.st_mtim.tv_sec == seconds)
                #expect(st.st_mtim.tv_nsec == nanoseconds)
            }
            try withNotesMount(databasePath: db) { m in
                let st = try #require(statOf(m.path("n.md")).0)
                #expect(st.st_mtim.tv_sec == seconds)
                #expect(st.st_mtim.tv_nsec == nanoseconds)
            }
        }
    }

    @Test func mtimeSetWhileDirtyIsKeptBySave() throws {
        // `cp -p`/`rsync -t` write, set the time, then close: the save must not overwrite the time.
        try withNotesMount { m in
            let fd = open(m.path("w.md"), O_CREAT | O_WRONLY, 0o644)
            #expect(fd >= 0)
            #expect(write(fd, "abc", 3) == 3)
            var times = [timespec(tv_sec: 1_000_000_000, tv_nsec: 5), timespec(tv_sec: 1_000_000_000, tv_nsec: 5)]
            #expect(futimens(fd, &times) == 0)
            #expect(close(fd) == 0)
            let st = try #require(statOf(m.path("w.md")).0)
            #expect(st.st_mtim.tv_sec == 1_000_000_000)
            #expect(st.st_mtim.tv_nsec == 5)
            #expect(note(m.database, titled: "w")?.text == "abc")
        }
    }

    @Test func chmodAndChownPersistInTheRecord() throws {
        try withDatabaseDirectory { db in
            try withNotesMount(databasePath: db) { m in
                #expect(writeFile(m.path("p.md"), "x") == 0)
                #expect(mkdir(m.path("d"), 0o755) == 0)
                #expect(chmod(m.path("p.md"), 0o600) == 0)
                #expect(chown(m.path("p.md"), 1234, 5678) == 0)
                #expect(chmod(m.path("d"), 0o700) == 0)
                #expect(chown(m.path("d"), 4321, 8765) == 0)
                let record = try #require(note(m.database, titled: "p")?.record)
                #expect(record["mode"]?.int64Value == 0o600)
                #expect(record["uid"]?.int64Value == 1234)
                #expect(record["gid"]?.int64Value == 5678)
                let folder = m.database.queryMetadata(Query(recordType: Folder.recordType)).first?.record
                #expect(folder?["mode"]?.int64Value == 0o700)
                #expect(folder?["uid"]?.int64Value == 4321)
                let st = try #require(statOf(m.path("p.md")).0)
                #expect(st.st_mode == S_IFREG | 0o600)
                #expect(st.st_uid == 1234 && st.st_gid == 5678)
                #expect(readFile(m.path("p.md")) == "x")
            }
            try withNotesMount(databasePath: db) { m in
                let st = try #require(statOf(m.path("p.md")).0)
                #expect(st.st_mode == S_IFREG | 0o600)
                #expect(st.st_uid == 1234)
                #expect(st.st_gid == 5678)
                let dir = try #require(statOf(m.path("d")).0)
                #expect(dir.st_mode == S_IFDIR | 0o700)
                #expect(dir.st_uid == 4321 && dir.st_gid == 8765)
            }
        }
    }

    @Test func newEntriesGetTheCallersModeMinusUmask() throws {
        try withNotesMount { m in
            let result = try sh("umask 027 && touch f.md && mkdir d && : > att.bin", in: m.root)
            #expect(result.status == 0, "\(result)")
            #expect(statOf(m.path("f.md")).0?.st_mode == S_IFREG | 0o640)
            #expect(statOf(m.path("att.bin")).0?.st_mode == S_IFREG | 0o640)
            #expect(statOf(m.path("d")).0?.st_mode == S_IFDIR | 0o750)
            #expect(note(m.database, titled: "f")?.record["mode"]?.int64Value == 0o640)
            let strict = try sh("umask 077 && touch g.md", in: m.root)
            #expect(strict.status == 0)
            #expect(statOf(m.path("g.md")).0?.st_mode == S_IFREG | 0o600)
        }
    }

    @Test func xattrsShowRecordMetadataAndRefuseWrites() throws {
        try withNotesMount { m in
            #expect(writeFile(m.path("x.md"), "x") == 0)
            #expect(mkdir(m.path("dir"), 0o755) == 0)
            let record = try #require(note(m.database, titled: "x"))
            #expect(xattr(m.path("x.md"), "user.notesfs.recordName") == record.recordID.recordName)
            #expect(xattr(m.path("x.md"), "user.notesfs.changeTag") == record.record.recordChangeTag)
            let created = try #require(xattr(m.path("x.md"), "user.notesfs.creationDate"))
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            let date = try #require(formatter.date(from: created), "creationDate \(created) is not ISO 8601")
            #expect(abs(date.timeIntervalSince(try #require(record.creationDate))) < 0.002)
            #expect(xattr(m.path("dir"), "user.notesfs.recordName") != nil)
            #expect(xattr(m.path("x.md"), "user.other") == nil)
            #expect(errno == ENODATA)
            // A namespace the filesystem cannot hold is unsupported, and so is a label it does not hold.
            for name in ["security.selinux", "system.nfs4_acl", "security.capability"] {
                #expect(xattr(m.path("x.md"), name) == nil)
                #expect(errno == EOPNOTSUPP, "\(name)")
            }
            #expect(errnoOf { removexattr(m.path("x.md"), "system.nfs4_acl") } == EOPNOTSUPP)
            #expect(xattr(m.path("x.md"), "system.posix_acl_access") == nil)
            #expect(errno == ENODATA, "no ACL")
            #expect(errnoOf { removexattr(m.path("x.md"), "security.selinux") } == ENODATA)
            #expect(xattr(m.path("x.md"), "trusted.x") == nil)
            #expect(errno == ENODATA)
            #expect(errnoOf { removexattr(m.path("x.md"), "user.other") } == ENODATA)
            // The three are read by name and not listed (a copy out of the mount must not carry them).
            var buffer = [CChar](repeating: 0, count: 1024)
            #expect(listxattr(m.path("x.md"), &buffer, buffer.count) == 0)
            // Writes are refused; the change tag follows saves.
            #expect(errnoOf { setxattr(m.path("x.md"), "user.notesfs.recordName", "forged", 6, 0) } == EPERM)
            #expect(errnoOf { removexattr(m.path("x.md"), "user.notesfs.recordName") } == EPERM)
            #expect(errnoOf { setxattr(m.path("x.md"), "user.mine", "v", 1, 0) } == 0)
            #expect(errnoOf { removexattr(m.path("x.md"), "user.mine") } == 0)
            #expect(recordName(m.path("x.md")) == record.recordID.recordName)
            #expect(writeFile(m.path("x.md"), "changed") == 0)
            let newTag = xattr(m.path("x.md"), "user.notesfs.changeTag")
            #expect(newTag != record.record.recordChangeTag)
            #expect(newTag == note(m.database, titled: "x")?.record.recordChangeTag)
        }
    }

    /// `ls -l` asks for each file's SELinux label and ACL. `EOPNOTSUPP` for a label (see
    /// NotesFileSystem+Xattr.swift) lets it stop asking after the first file; the ACLs it asks for
    /// every file are answered `ENODATA` (the kernel keeps them, with `FUSE_CAP_POSIX_ACL`, so only
    /// the first look at each file reaches the daemon).
    @Test func lsAsksForLabelsOnceAndForACLsAsEverywhere() throws {
        try withNotesMount { m in
            for i in 0..<40 { #expect(writeFile(m.path("n\(i).md"), "x") == 0) }
            let scratch = makeTemporaryDirectory("lstrace")
            defer { try? FileManager.default.removeItem(atPath: scratch) }
            let trace = scratch + "/trace"
            let listed = try sh("strace -f -o \(shellQuoted(trace)) -e trace=getxattr,lgetxattr,fgetxattr ls -l", in: m.root)
            #expect(listed.status == 0, "\(listed)")
            #expect(listed.out.split(separator: "\n").count == 41, "\(listed)")  // "total" and 40 files
            let calls = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n").filter { $0.contains("xattr(") }
            #expect(calls.count > 0, "ls -l made no xattr call: the test would show nothing")
            let labels = calls.filter { $0.contains("security.") }
            #expect(labels.count <= 2, "\(labels.count) label calls for 40 files: \(labels.prefix(6))")
            #expect(labels.allSatisfy { $0.contains("EOPNOTSUPP") }, "\(labels)")
            #expect(calls.filter { $0.contains("system.posix_acl") }.allSatisfy { $0.contains("ENODATA") }, "\(calls.prefix(6))")
        }
    }
}
