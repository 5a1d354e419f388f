/// Mount tests for directories: mkdir, readdir/readdirplus, rmdir, rename (incl. renameat2 flags).

import CFuse
import FUSE
import Foundation
import Glibc
import TestSupport
import Testing

@Suite(.tags(.mount), .needsFUSE) struct DirectoryTests {
    @Test func mkdirAndList() throws {
        try withMount { _, root in
            #expect(errnoOf { mkdir(root + "/dir", 0o755) } == 0)
            #expect(errnoOf { mkdir(root + "/dir", 0o755) } == EEXIST)
            #expect(writeFile(root + "/dir/a", "1") == 0)
            #expect(writeFile(root + "/dir/b", "2") == 0)
            let names = try FileManager.default.contentsOfDirectory(atPath: root + "/dir").sorted()
            #expect(names == ["a", "b"])
            #expect(statOf(root + "/dir").0.map { $0.st_mode & S_IFMT } == S_IFDIR)
        }
    }

    @Test func rmdirPassesThrownErrnos() throws {
        try withMount { _, root in
            #expect(errnoOf { mkdir(root + "/full", 0o755) } == 0)
            #expect(writeFile(root + "/full/x", "x") == 0)
            #expect(errnoOf { rmdir(root + "/full") } == ENOTEMPTY)
            #expect(errnoOf { unlink(root + "/full/x") } == 0)
            #expect(errnoOf { unlink(root + "/full/x") } == ENOENT)
            #expect(errnoOf { rmdir(root + "/full") } == 0)
            #expect(statOf(root + "/full").1 == ENOENT)
        }
    }

    @Test func renameWithFlags() throws {
        try withMount { _, root in
            #expect(writeFile(root + "/a", "A") == 0)
            #expect(writeFile(root + "/b", "B") == 0)
            let noReplace = errnoOf { notesfs_renameat2(AT_FDCWD, root + "/a", AT_FDCWD, root + "/b", 1) }
            #expect(noReplace == EEXIST)
            #expect(readFile(root + "/b") == "B")
            #expect(errnoOf { notesfs_renameat2(AT_FDCWD, root + "/a", AT_FDCWD, root + "/b", 2) } == 0)
            #expect(readFile(root + "/a") == "B")
            #expect(readFile(root + "/b") == "A")
            #expect(errnoOf { rename(root + "/a", root + "/c") } == 0)
            #expect(statOf(root + "/a").1 == ENOENT)
            #expect(readFile(root + "/c") == "B")
        }
    }

    /// Many long names span several readdir(plus) pages: every entry is listed exactly once, and
    /// each file ends with exactly one lookup reference whether it arrived by readdirplus (counted
    /// only when packed) or by a later lookup; a miscounted entry would show 0 or 2.
    @Test func readdirplusCountsOnlyPackedEntries() throws {
        let fileSystem = MemoryFileSystem(timeout: 300)
        try withMount(fileSystem) { _, root in
            #expect(errnoOf { mkdir(root + "/many", 0o755) } == 0)
            let names = (0..<150).map { String(format: "%03d-", $0) + String(repeating: "n", count: 120) }
            for name in names { #expect(writeFile(root + "/many/" + name, "x") == 0) }
            // Each create left one reference (the kernel keeps the new dentries): the baseline.
            let directory = try #require(fileSystem.inode(named: "many"))
            let inodes = names.map { fileSystem.inode(named: FileName($0), in: directory) }
            let baseline = inodes.map { $0.map(fileSystem.lookupCount) ?? 0 }
            #expect(baseline.allSatisfy { $0 == 1 })

            let listed = try FileManager.default.contentsOfDirectory(atPath: root + "/many")
            #expect(listed.sorted() == names)
            #expect(fileSystem.readdirplusPacked > 0)
            let afterListing = inodes.map { $0.map(fileSystem.lookupCount) ?? 0 }
            let packed = zip(afterListing, baseline).map { $0 - $1 }
            #expect(packed.allSatisfy { $0 <= 1 }, "an entry was counted twice in one listing")
            #expect(packed.reduce(0, +) == UInt64(fileSystem.readdirplusPacked))
        }
    }

    @Test func freshTreeListingBalancesLookups() throws {
        let fileSystem = MemoryFileSystem(timeout: 300)
        // Populate behind the kernel's back so no reference exists before the listing.
        let names = (0..<400).map { String(format: "%03d-", $0) + String(repeating: "m", count: 100) }
        for name in names {
            _ = try? fileSystem.create(RequestContext(), parent: Attributes.rootInode, name: FileName(name), mode: 0o644, flags: 0)
        }
        let inodes = names.map { fileSystem.inode(named: FileName($0))! }
        for inode in inodes { fileSystem.forget(inode, lookups: 1) }
        #expect(inodes.allSatisfy { fileSystem.lookupCount($0) == 0 })
        try withMount(fileSystem) { _, root in
            let listed = try FileManager.default.contentsOfDirectory(atPath: root)
            #expect(listed.sorted() == names)
            for name in names { #expect(statOf(root + "/" + name).1 == 0) }
            let counts = inodes.map(fileSystem.lookupCount)
            let wrong = zip(names, counts).filter { $0.1 != 1 }.map { "\($0.0.prefix(3)): \($0.1)" }
            #expect(wrong.isEmpty, "entries whose lookup count is not 1: \(wrong)")
        }
    }
}
