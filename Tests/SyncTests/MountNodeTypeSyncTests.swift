import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Every node type the mount keeps as a record (notes, attachments, folders, symlinks, hard links,
/// FIFOs, sockets, character and block devices, with their modes, owners and times), made in one
/// mount, shows the same in the other mounts: `stat -c`, `readlink`, `cmp`, `getfattr`.
@Suite(.tags(.mount, .postgres), .needsFUSE, .needsPostgres) struct MountNodeTypeSyncTests {
    /// A tree under `Nodes/` of `mount` with every node type: a note, a note of bytes that are not
    /// UTF-8, an executable attachment, a folder of mode 0750 with an attachment owned by another
    /// user, relative, absolute, dangling and non-UTF-8 symlinks, hard links (to a note, an
    /// attachment and a symlink, one across folders), a FIFO, a socket and two devices; then every
    /// entry's mtime set to one time with nanoseconds.
    static func makeTree(in mount: ChildMount) throws {
        let script = """
            import os, socket, stat
            os.mkdir('Nodes'); os.chdir('Nodes')
            open('Note.md', 'w').write('# note\\nbody\\n')
            open('Latin1.md', 'wb').write(b'caf\\xe9 is not UTF-8\\n')
            open('run.sh', 'w').write('#!/bin/sh\\necho hi\\n'); os.chmod('run.sh', 0o755)
            os.mkdir('sub'); open('sub/inner.txt', 'w').write('inner'); os.chown('sub/inner.txt', 1234, 5678)
            os.symlink('Note.md', 'rel'); os.symlink('/etc/hostname', 'abs'); os.symlink('missing', 'dangling')
            os.symlink('../run.sh', 'sub/up'); os.symlink(b'caf\\xe9', b'latin1')
            os.link('run.sh', 'sub/run-link'); os.link('Note.md', 'Same note.md'); os.link('rel', 'rel2')
            os.mkfifo('fifo', 0o640)
            s = socket.socket(socket.AF_UNIX); s.bind('sock'); s.close()
            os.mknod('null', 0o666 | stat.S_IFCHR, os.makedev(1, 3))
            os.mknod('disk', 0o600 | stat.S_IFBLK, os.makedev(8, 1))
            os.chmod('sub', 0o750)
            for d, dirs, files in os.walk('.', topdown=False):
                for p in dirs + files:
                    os.utime(os.path.join(d, p), ns=(1_000_000_000_123_456_789, 1_000_000_000_987_654_321), follow_symlinks=False)
            """
        let result = try run(
            "/usr/bin/python3", ["-c", "import os; os.chdir(\(pythonQuoted(mount.path)))\n" + script], mergingErrors: true)
        try #require(result.status == 0, "\(result.out)")
    }

    /// `stat -c FORMAT` of every entry under `directory` of `mount`, sorted by path.
    static func stats(_ mount: ChildMount, _ format: String, under directory: String = "Nodes") -> String? {
        let result = try? mount.shell("find \(shellQuoted(directory)) -print0 | sort -z | xargs -0 stat -c \(shellQuoted(format))")
        return result?.status == 0 ? result?.out : nil
    }

    /// What must agree across mounts: name and symlink target, type, mode, link count, owner,
    /// size, device numbers.
    static let shape = "%N|%F|%a|%h|%u:%g|%s|%t:%T"

    /// The groups of names that are one file (the same inode) in `mount`, inode numbers left out
    /// (each machine numbers its own).
    static func hardLinkGroups(_ mount: ChildMount) -> Set<[String]> {
        guard let lines = stats(mount, "%i %n")?.split(separator: "\n") else { return [] }
        var groups: [Substring: [String]] = [:]
        for line in lines {
            let parts = line.split(separator: " ", maxSplits: 1)
            groups[parts[0], default: []].append(String(parts[1]))
        }
        return Set(groups.values.filter { $0.count > 1 }.map { $0.sorted() })
    }

    /// `getfattr -h -n KEY --only-values` of every regular file and directory under `Nodes`
    /// (the kernel allows `user.` attributes on no other type), one line each.
    static func xattrs(_ mount: ChildMount, _ key: String) -> String? {
        let result = try? mount.shell(
            "find Nodes \\( -type f -o -type d \\) -print0 | sort -z | "
                + "xargs -0 -I{} sh -c 'printf \"%s=\" \"$1\"; getfattr -h -n \(key) --only-values \"$1\"; echo' sh {}")
        return result?.status == 0 ? result?.out : nil
    }

    @Test func everyNodeTypeMadeInOneMountShowsTheSameInTheOthers() throws {
        try withSyncedMounts(3) { mounts, _ in
            let (a, others) = (mounts[0], Array(mounts.dropFirst()))
            try Self.makeTree(in: a)
            let expected = try #require(Self.stats(a, Self.shape))
            // 18 entries: Nodes, sub and the 16 nodes in them.
            #expect(expected.split(separator: "\n").count == 18, "\(expected)")
            #expect(expected.contains("'Nodes/latin1' -> 'caf"))
            #expect(expected.contains("'Nodes/null'|character special file|644|1|0:0|0|1:3"), "mode 0666 less the umask 022")
            expectEverywhere(others, "every node of A's tree, type, mode, owner and target") { Self.stats($0, Self.shape) == expected }
            for mount in others {
                #expect(
                    Self.stats(mount, Self.shape) == expected, "\(mount.path):\n\(Self.stats(mount, Self.shape) ?? "")\nA:\n\(expected)")
            }

            let groups = Self.hardLinkGroups(a)
            #expect(
                groups == [["Nodes/Note.md", "Nodes/Same note.md"], ["Nodes/rel", "Nodes/rel2"], ["Nodes/run.sh", "Nodes/sub/run-link"]])
            for mount in others { #expect(Self.hardLinkGroups(mount) == groups, "hard links in \(mount.path)") }

            // Bytes, through the names and through the links.
            for mount in others {
                for file in ["Note.md", "Latin1.md", "run.sh", "sub/inner.txt", "Same note.md", "sub/run-link", "rel", "sub/up"] {
                    let cmp = try run("/usr/bin/cmp", [a.path + "/Nodes/" + file, mount.path + "/Nodes/" + file], mergingErrors: true)
                    #expect(cmp.status == 0, "\(file) in \(mount.path): \(cmp.out)")
                }
                #expect(mount.bytes("Nodes/Latin1.md") == Data("caf".utf8) + Data([0xE9]) + Data(" is not UTF-8\n".utf8))
                var buffer = [CChar](repeating: 0, count: 64)
                let count = readlink(mount.path + "/Nodes/latin1", &buffer, buffer.count)
                #expect(count == 4 && buffer[..<4].map { UInt8(bitPattern: $0) } == Array("caf".utf8) + [0xE9])
            }

            // The same records: every regular file and folder has A's record name.
            let names = try #require(Self.xattrs(a, "user.notesfs.recordName"))
            #expect(names.split(separator: "\n").count == 2 + 6, "\(names)")
            for mount in others { #expect(Self.xattrs(mount, "user.notesfs.recordName") == names, "record names in \(mount.path)") }
        }
    }

    /// Renames and moves of every node type, a folder renamed and moved with what it holds, a
    /// symlink pointed elsewhere, and both ways of dropping one name of a hard link (the link's
    /// name, and the first name, whose record then takes the link's): made in one mount, the same
    /// in the others.
    @Test func nodesRenamedRelinkedAndUnlinkedInOneMountFollowInTheOthers() throws {
        try withSyncedMounts(3) { mounts, _ in
            let (a, b, c) = (mounts[0], mounts[1], mounts[2])
            try Self.makeTree(in: a)
            let made = try #require(Self.stats(a, Self.shape))
            expectEverywhere([b, c], "A's tree") { Self.stats($0, Self.shape) == made }
            let script = try #require(a.recordName("Nodes/run.sh"))
            try b.run(
                "cd Nodes && mv fifo sub/fifo2 && mv sock sock2 && mv disk sub/ && rm 'Same note.md' && rm run.sh && mv sub moved "
                    + "&& mkdir Outer && mv moved Outer/ && ln -sfn Outer/moved/run-link rel && cd .. && mv Nodes Renamed")
            let changed = try #require(Self.stats(b, Self.shape, under: "Renamed"))
            #expect(changed.contains("'Renamed/Outer/moved/fifo2'|fifo|640|1|"), "\(changed)")
            // ln -sf replaced the name rel: rel2 keeps the old symlink, now its only name.
            #expect(changed.contains("'Renamed/rel' -> 'Outer/moved/run-link'|symbolic link|777|1|"), "\(changed)")
            #expect(changed.contains("'Renamed/rel2' -> 'Note.md'|symbolic link|777|1|"), "\(changed)")
            #expect(changed.contains("'Renamed/Note.md'|regular file|644|1|"), "\(changed)")
            #expect(changed.contains("'Renamed/Outer/moved/run-link'|regular file|755|1|"), "\(changed)")
            #expect(!changed.contains("run.sh'|regular"), "\(changed)")
            expectEverywhere([a, c], "B's renames, moves and unlinks") { Self.stats($0, Self.shape, under: "Renamed") == changed }
            for mount in [a, c] {
                #expect(!mount.hasEntry("Nodes"), "\(mount.path)")
                #expect(mount.read("Renamed/Outer/moved/run-link") == "#!/bin/sh\necho hi\n")
                #expect(mount.recordName("Renamed/Outer/moved/run-link") == script, "the record took its link's name")
                #expect(mount.read("Renamed/Outer/moved/inner.txt") == "inner")
                #expect(mount.read("Renamed/rel") == "#!/bin/sh\necho hi\n" && mount.read("Renamed/rel2") == "# note\nbody\n")
            }
        }
    }

    /// `user.notesfs.creationDate` is the record's: the same in every mount.
    @Test
    func creationDatesAreTheSameInEveryMount() throws {
        try withSyncedMounts(3) { mounts, _ in
            let (a, others) = (mounts[0], Array(mounts.dropFirst()))
            try Self.makeTree(in: a)
            let expected = try #require(Self.stats(a, Self.shape))
            expectEverywhere(others, "A's tree") { Self.stats($0, Self.shape) == expected }
            let dates = try #require(Self.xattrs(a, "user.notesfs.creationDate"))
            #expect(dates.split(separator: "\n").count == 2 + 6, "\(dates)")
            for mount in others {
                let seen = Self.xattrs(mount, "user.notesfs.creationDate")
                #expect(seen == dates, "creation dates in \(mount.path):\n\(seen ?? "none")\nA:\n\(dates)")
            }
        }
    }

    /// mtimes (with nanoseconds) set by `utimensat` in one mount show in the others; and a later
    /// metadata-only change (chmod, chown, touch) too.
    @Test func modesOwnersAndTimesSetInOneMountShowInTheOthers() throws {
        try withSyncedMounts(3) { mounts, _ in
            let (a, b, c) = (mounts[0], mounts[1], mounts[2])
            try Self.makeTree(in: a)
            let times = "%n %y"
            let expected = try #require(Self.stats(a, times))
            #expect(expected.contains("Nodes/Note.md 2001-09-09 01:46:40.987654321"), "\(expected)")
            expectEverywhere([b, c], "A's mtimes") { Self.stats($0, times) == expected }

            try b.run(
                "chmod 600 Nodes/run.sh && chown 42:43 Nodes/Note.md && chmod 1777 Nodes/sub && touch -m -d '2020-02-02 02:02:02.5' Nodes/Latin1.md"
            )
            let changed = try #require(Self.stats(b, Self.shape + "|%y"))
            #expect(changed.contains("'Nodes/run.sh'|regular file|600|2|"), "\(changed)")
            #expect(changed.contains("'Nodes/Note.md'|regular file|644|2|42:43|"), "\(changed)")
            #expect(changed.contains("'Nodes/sub'|directory|1777|"), "\(changed)")
            #expect(changed.contains("2020-02-02 02:02:02.500000000"), "\(changed)")
            expectEverywhere([a, c], "B's chmod, chown and touch") { Self.stats($0, Self.shape + "|%y") == changed }
        }
    }

    /// A binary attachment of a few MB: created in one mount, overwritten in the middle (same size)
    /// in another, deleted in the third; every mount shows each version byte for byte.
    @Test func aLargeBinaryAttachmentArrivesByteForByte() throws {
        try withSyncedMounts(3) { mounts, _ in
            let (a, b, c) = (mounts[0], mounts[1], mounts[2])
            let size = 3 * 1024 * 1024 + 12345
            var generator = SystemRandomNumberGenerator()
            let original = Data((0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) })
            let patch = Data((0..<100_000).map { _ in UInt8.random(in: 0...255, using: &generator) })
            var patched = original
            patched.replaceSubrange(1_500_000..<1_600_000, with: patch)
            let scratch = NSTemporaryDirectory() + "notesfs-attachment-" + UUID().uuidString
            try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: false)
            defer { try? FileManager.default.removeItem(atPath: scratch) }
            try original.write(to: URL(fileURLWithPath: scratch + "/photo.jpg"))
            try patch.write(to: URL(fileURLWithPath: scratch + "/patch"))

            try a.run("mkdir Pictures && cp \(shellQuoted(scratch))/photo.jpg Pictures/")
            expectEverywhere(mounts, "the attachment copied into A", within: 30) { $0.bytes("Pictures/photo.jpg") == original }
            for mount in [b, c] {
                let cmp = try run("/usr/bin/cmp", [scratch + "/photo.jpg", mount.path + "/Pictures/photo.jpg"], mergingErrors: true)
                #expect(cmp.status == 0, "cmp: \(cmp.out)")
            }
            try b.run("dd if=\(shellQuoted(scratch))/patch of=Pictures/photo.jpg bs=100000 seek=15 conv=notrunc status=none")
            #expect(b.bytes("Pictures/photo.jpg") == patched)
            expectEverywhere(mounts, "the overwrite in B", within: 30) { $0.bytes("Pictures/photo.jpg") == patched }
            #expect(a.recordName("Pictures/photo.jpg") == c.recordName("Pictures/photo.jpg"))
            try c.run("rm Pictures/photo.jpg")
            expectEverywhere(mounts, "the delete in C") { !$0.hasEntry("Pictures/photo.jpg") && $0.exists("Pictures") }
        }
    }
}

/// `text` quoted for Python source.
func pythonQuoted(_ text: String) -> String {
    "'" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
}
