/// Symlinks, FIFOs, sockets and devices through a real mount and real programs: `cp -a`, `rsync -a`
/// (twice: the second transfers nothing), `tar`, `git clone`, emacs' lock link, and a remount.

import FUSE
import Foundation
import Glibc
import Notes
import RecordStore
import TestSupport
import Testing

private let posixScript = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("Conformance/posix.py").path

/// Every node under `root` as `posix.py dump` describes it (type, mode, size, target, rdev, owner, bytes).
private func dump(_ root: String) throws -> String {
    let result = try run(["/usr/bin/python3", posixScript, "dump", root])
    #expect(result.status == 0, "\(result)")
    return result.out
}

/// A tree with a note, an executable attachment, a folder, relative, absolute, dangling and
/// non-UTF-8 symlinks, hard links (to a note, an attachment and a symlink, one across folders), a
/// FIFO, a socket and character and block devices.
private func makeTree(_ root: String) throws {
    let script = """
        import os, socket, stat
        os.chdir(\(quotedPython(root)))
        open('Note.md', 'w').write('# note\\n')
        open('run.sh', 'w').write('#!/bin/sh\\necho hi\\n'); os.chmod('run.sh', 0o755)
        os.mkdir('sub'); open('sub/inner.txt', 'w').write('inner')
        os.symlink('Note.md', 'rel'); os.symlink('/etc/hostname', 'abs'); os.symlink('missing', 'dangling')
        os.symlink('../run.sh', 'sub/up'); os.symlink(b'caf\\xe9', b'latin1')
        os.link('run.sh', 'sub/run-link'); os.link('Note.md', 'Same note.md'); os.link('rel', 'rel2')
        os.mkfifo('fifo', 0o640)
        s = socket.socket(socket.AF_UNIX); s.bind('sock'); s.close()
        os.mknod('null', 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        os.mknod('disk', 0o600 | stat.S_IFBLK, os.makedev(8, 1))
        for p in os.listdir('.'): os.utime(p, (1_000_000_000, 1_000_000_000), follow_symlinks=False)
        """
    let result = try run(["/usr/bin/python3", "-c", script])
    try #require(result.status == 0, "\(result)")
}

private func quotedPython(_ s: String) -> String {
    "'" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
}

/// The number of records of `type` in the database.
func recordCount(_ database: RecordDatabase, _ type: String) -> Int { database.queryMetadata(Query(recordType: type)).count }

@Suite struct NodeTypeTests {
    @Test(.tags(.mount), .needsFUSE) func copyRsyncAndTarKeepEveryNodeType() throws {
        let source = makeTemporaryDirectory("nodetree")
        defer { try? FileManager.default.removeItem(atPath: source) }
        try makeTree(source)
        let expected = try dump(source)
        try withNotesMount { m in
            for directory in ["cp", "rsync", "tar"] { #expect(mkdir(m.path(directory), 0o755) == 0) }
            let cp = try run(["/bin/cp", "-a", source + "/.", m.path("cp")])
            #expect(cp.status == 0, "\(cp)")
            #expect(try dump(m.path("cp")) == expected, "cp -a")
            let rsync = try run(["/usr/bin/rsync", "-aH", source + "/", m.path("rsync")])
            #expect(rsync.status == 0, "\(rsync)")
            #expect(try dump(m.path("rsync")) == expected, "rsync -aH")
            let again = try run(["/usr/bin/rsync", "-aHi", source + "/", m.path("rsync")])
            #expect(again.status == 0 && again.out.isEmpty, "a second rsync transfers nothing: \(again)")
            // tar skips sockets: the reference is the same round trip on the kernel's filesystem.
            let reference = makeTemporaryDirectory("nodetree-tar")
            defer { try? FileManager.default.removeItem(atPath: reference) }
            let plain = try sh("tar -C \(shellQuoted(source)) -cf - . | tar -C \(shellQuoted(reference)) -xpf -")
            #expect(plain.status == 0, "\(plain)")
            let tarred = try dump(reference)
            #expect(!tarred.contains("\"sock\"") && tarred.contains("\"fifo\""))
            let tar = try sh("tar -C \(shellQuoted(source)) -cf - . | tar -C \(shellQuoted(m.path("tar"))) -xpf -")
            #expect(tar.status == 0, "\(tar)")
            #expect(try dump(m.path("tar")) == tarred, "tar x into the mount")
            // And back out of the mount.
            let back = makeTemporaryDirectory("nodetree-back")
            defer { try? FileManager.default.removeItem(atPath: back) }
            let out = try sh("tar -C \(shellQuoted(m.path("tar"))) -cf - . | tar -C \(shellQuoted(back)) -xpf -")
            #expect(out.status == 0, "\(out)")
            #expect(try dump(back) == tarred, "tar c out of the mount")
            // 5 symlinks, 3 hard links and 4 special files in the tree; tar's copy has no socket.
            #expect(recordCount(m.database, Symlink.recordType) == 3 * 5)
            #expect(recordCount(m.database, Link.recordType) == 3 * 3)
            #expect(recordCount(m.database, SpecialFile.recordType) == 2 * 4 + 3)
        }
    }

    @Test(.tags(.mount), .needsFUSE) func nodesSurviveARemount() throws {
        try withDatabaseDirectory { path in
            try withNotesMount(databasePath: path) { m in try makeTree(m.root) }
            try withNotesMount(databasePath: path) { m in
                var st = stat()
                #expect(lstat(m.path("fifo"), &st) == 0 && st.st_mode & S_IFMT == S_IFIFO && st.st_mode & 0o7777 == 0o640)
                #expect(lstat(m.path("sock"), &st) == 0 && st.st_mode & S_IFMT == S_IFSOCK)
                #expect(lstat(m.path("null"), &st) == 0 && st.st_mode & S_IFMT == S_IFCHR && st.st_rdev == 0x103)  // makedev(1, 3)
                #expect(lstat(m.path("disk"), &st) == 0 && st.st_mode & S_IFMT == S_IFBLK && st.st_rdev == 0x801)  // makedev(8, 1)
                #expect(lstat(m.path("latin1"), &st) == 0 && st.st_mode & S_IFMT == S_IFLNK && st.st_size == 4)
                #expect(st.st_mtim.tv_sec == 1_000_000_000, "lutimes kept")
                var buffer = [CChar](repeating: 0, count: 64)
                let count = readlink(m.path("latin1"), &buffer, buffer.count)
                #expect(count == 4 && buffer[..<4].map { UInt8(bitPattern: $0) } == Array("caf".utf8) + [0xE9])
                #expect(readFile(m.path("sub/up")) == "#!/bin/sh\necho hi\n", "a relative symlink resolves")
                #expect(errnoOf { open(m.path("dangling"), O_RDONLY) } == ENOENT)
            }
        }
    }

    @Test(.tags(.mount), .needsFUSE) func gitCloneWithSymlinkAndExecutableIsClean() throws {
        let origin = makeTemporaryDirectory("nodegit")
        defer { try? FileManager.default.removeItem(atPath: origin) }
        let environment = ["HOME": origin, "GIT_CONFIG_NOSYSTEM": "1"]
        let setup = try sh(
            """
            git init -q repo && cd repo && printf '#!/bin/sh\\n' > tool.sh && chmod +x tool.sh && ln -s tool.sh link \
            && printf 'x\\n' > Readme.md && git add -A && git -c user.name=t -c user.email=t@t commit -qm one
            """, in: origin, environment: environment)
        try #require(setup.status == 0, "\(setup)")
        try withNotesMount { m in
            let clone = try run(["/usr/bin/git", "clone", "-q", origin + "/repo", m.path("clone")], environment: environment)
            #expect(clone.status == 0, "\(clone)")
            let status = try sh("git status --porcelain && git fsck --strict", in: m.path("clone"), environment: environment)
            #expect(status.status == 0 && status.out.isEmpty, "\(status)")
            var st = stat()
            #expect(lstat(m.path("clone/link"), &st) == 0 && st.st_mode & S_IFMT == S_IFLNK)
            #expect(stat(m.path("clone/tool.sh"), &st) == 0 && st.st_mode & 0o111 != 0)
        }
    }

    @Test(.tags(.mount), .needsFUSE) func emacsLockLinkStaysInMemory() throws {
        // emacs' lock: symlink .#x.md -> user@host.pid:time, readlink it, unlink it at save.
        try withNotesMount { m in
            #expect(writeFile(m.path("x.md"), "text") == 0)
            #expect(symlink("root@host.1234:1", m.path(".#x.md")) == 0)
            #expect(errnoOf { symlink("root@host.9999:2", m.path(".#x.md")) } == EEXIST, "a second editor sees the lock")
            var buffer = [CChar](repeating: 0, count: 64)
            let count = readlink(m.path(".#x.md"), &buffer, buffer.count)
            #expect(count == 16 && String(decoding: buffer[..<16].map { UInt8(bitPattern: $0) }, as: UTF8.self) == "root@host.1234:1")
            #expect(recordCount(m.database, Symlink.recordType) == 0, "the lock is scratch: no record")
            #expect(listing(m.root)?.sorted() == [".#x.md", "x.md"])
            #expect(unlink(m.path(".#x.md")) == 0)
            #expect(listing(m.root) == ["x.md"])
        }
    }
}

@Suite struct HardLinkTests {
    /// One name of a file with two goes (its own or its link's; by unlink or by a rename over it)
    /// where the kernel does not see it happen: the operation is called on the mounted filesystem
    /// directly. The kernel cached the other name's attributes (60 s); the mount's invalidation,
    /// sent from its notification thread, makes that name show the lower link count and the new
    /// ctime long before. Fails without the `.attributes` invalidation of the surviving inode.
    @Test(.tags(.mount), .needsFUSE, arguments: ["unlink", "rename over", "unlink the link", "rename over the link"])
    func theNameLeftShowsTheNewLinkCountAndCtimeAtOnce(_ how: String) throws {
        try withNotesMount { m in
            #expect(writeFile(m.path("a.md"), "one") == 0)
            #expect(writeFile(m.path("s.md"), "two") == 0)
            #expect(link(m.path("a.md"), m.path("b.md")) == 0)
            let (gone, left) = how.hasSuffix("the link") ? ("b.md", "a.md") : ("a.md", "b.md")
            var before = stat()
            #expect(stat(m.path(left), &before) == 0 && before.st_nlink == 2)  // the kernel caches these
            let context = RequestContext(uid: getuid(), gid: getgid())
            if how.hasPrefix("unlink") {
                try m.fileSystem.unlink(context, parent: 1, name: FileName(gone))
            } else {
                try m.fileSystem.rename(context, parent: 1, name: "s.md", newParent: 1, newName: FileName(gone), flags: [])
            }
            var after = stat()
            #expect(eventually(20) { stat(m.path(left), &after) == 0 && after.st_nlink == 1 }, "nlink \(after.st_nlink)")
            #expect(after.st_ino == before.st_ino)
            #expect((after.st_ctim.tv_sec, after.st_ctim.tv_nsec) > (before.st_ctim.tv_sec, before.st_ctim.tv_nsec), "ctime moved")
            #expect((after.st_mtim.tv_sec, after.st_mtim.tv_nsec) == (before.st_mtim.tv_sec, before.st_mtim.tv_nsec), "mtime kept")
            #expect(readFile(m.path(left)) == "one")
        }
    }

    @Test(.tags(.mount), .needsFUSE) func namesShareInodeAndBytesAndOutliveEachOther() throws {
        try withDatabaseDirectory { path in
            try withNotesMount(databasePath: path) { m in
                #expect(mkdir(m.path("d"), 0o755) == 0)
                #expect(writeFile(m.path("a.md"), "one") == 0)
                let name = try #require(recordName(m.path("a.md")))
                #expect(link(m.path("a.md"), m.path("d/b.md")) == 0)
                #expect(link(m.path("a.md"), m.path("c.md")) == 0)
                var first = stat()
                var second = stat()
                #expect(stat(m.path("a.md"), &first) == 0 && stat(m.path("d/b.md"), &second) == 0)
                #expect(first.st_ino == second.st_ino && first.st_nlink == 3)
                #expect(writeFile(m.path("d/b.md"), "two") == 0)
                #expect(readFile(m.path("c.md")) == "two", "one file behind every name")
                #expect(errnoOf { link(m.path("d"), m.path("d2")) } == EPERM, "no links to directories")
                // The primary name goes: the record lives on under another name, same identity.
                #expect(unlink(m.path("a.md")) == 0)
                #expect(recordName(m.path("d/b.md")) == name)
                #expect(stat(m.path("c.md"), &first) == 0 && first.st_nlink == 2)
                #expect(rename(m.path("c.md"), m.path("d/c2.md")) == 0)
                #expect(fileRecordCount(m.database) == 1 && recordCount(m.database, Link.recordType) == 1)
            }
            try withNotesMount(databasePath: path) { m in
                var first = stat()
                var second = stat()
                #expect(stat(m.path("d/b.md"), &first) == 0 && stat(m.path("d/c2.md"), &second) == 0)
                #expect(first.st_ino == second.st_ino && first.st_nlink == 2, "after a remount")
                #expect(readFile(m.path("d/c2.md")) == "two")
                #expect(unlink(m.path("d/b.md")) == 0 && unlink(m.path("d/c2.md")) == 0)
                #expect(fileRecordCount(m.database) == 0 && recordCount(m.database, Link.recordType) == 0, "no stray records")
            }
        }
    }
}
