/// The page cache after this mount's own saves (`NotesFileSystem+PageCache.swift`): the bytes a
/// save pushes into the kernel are exactly the file's, and never outlive a later change, whether
/// it is made through the mount, by another database handle or by the CLI, at the same size. And
/// the bytes a read-only open stores for a note no one opened since the mount.

import FUSE
import Foundation
import Glibc
import Notes
import NotesFS
import RecordStore
import Synchronization
import TestSupport
import Testing

@Suite(.tags(.mount), .needsFUSE) struct PageCacheTests {
    /// Bytes of `count` that differ from version to version but keep their size.
    static func version(_ number: Int, count: Int) -> [UInt8] {
        let line = Array("version \(number) of this note; ".utf8)
        return (0..<count).map { line[$0 % line.count] }
    }

    @Test func bytesWrittenReadBackExactlyAfterClose() throws {
        // Sizes around page boundaries: one partly filled page, exactly one, several and a part.
        let sizes = [1, 100, 4095, 4096, 4097, 8192 + 17, 100_000]
        try withNotesMount { m in
            for (index, size) in sizes.enumerated() {
                #expect(writeBytes(m.path("n\(index).md"), Self.version(index, count: size)) == 0)
            }
            // Read at once (the store may not be sent yet) and after it surely was.
            for pass in 0..<2 {
                for (index, size) in sizes.enumerated() {
                    #expect(readBytes(m.path("n\(index).md")) == Self.version(index, count: size), "size \(size), pass \(pass)")
                }
                usleep(300_000)
            }
        }
    }

    @Test func aStoredLastPageReadsAsZerosPastTheEnd() throws {
        try withNotesMount { m in
            for size in [5, 1000, 4000] {
                #expect(writeBytes(m.path("t\(size).md"), Self.version(size, count: size)) == 0)
            }
            usleep(300_000)
            for size in [5, 1000, 4000] {
                let fd = open(m.path("t\(size).md"), O_RDONLY)
                #expect(fd >= 0)
                defer { close(fd) }
                let page = try #require(mmap(nil, 4096, PROT_READ, MAP_SHARED, fd, 0))
                #expect(page != MAP_FAILED)
                defer { munmap(page, 4096) }
                let bytes = Array(UnsafeRawBufferPointer(start: page, count: 4096))
                #expect(Array(bytes[..<size]) == Self.version(size, count: size))
                #expect(bytes[size...].allSatisfy { $0 == 0 }, "size \(size): the mapped page holds bytes past the end")
            }
        }
    }

    @Test func sameSizeRewritesThroughTheMountAreNeverShadowedByAnEarlierStore() throws {
        // Each close queues a store of that version; the next writable open must not let its
        // write land before that store (which would put the older bytes back over it).
        try withNotesMount { m in
            let path = m.path("again.md")
            for number in 0..<200 {
                let bytes = Self.version(number, count: 3000)
                let fd = open(path, O_CREAT | O_RDWR, 0o644)
                #expect(fd >= 0)
                #expect(bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) } == 3000)
                #expect(close(fd) == 0)
                let read = readBytes(path)
                #expect(read == bytes, "version \(number) reads as \(String(decoding: read ?? [], as: UTF8.self).prefix(20))")
                if read != bytes { break }
            }
        }
    }

    @Test func writerReadingBackWhileAStoreMayRunSeesItsOwnBytes() throws {
        try withNotesMount { m in
            let path = m.path("rw.md")
            #expect(writeBytes(path, Self.version(0, count: 2000)) == 0)
            for number in 1..<100 {
                let bytes = Self.version(number, count: 2000)
                let fd = open(path, O_RDWR)
                #expect(fd >= 0)
                #expect(bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) } == 2000)
                var back = [UInt8](repeating: 0, count: 2000)
                #expect(pread(fd, &back, 2000, 0) == 2000)
                #expect(back == bytes, "version \(number)")
                #expect(close(fd) == 0)
                if back != bytes { break }
            }
        }
    }

    @Test func truncateByPathAfterAStoreShowsTheShorterFile() throws {
        try withNotesMount { m in
            let path = m.path("cut.md")
            let bytes = Self.version(7, count: 5000)
            #expect(writeBytes(path, bytes) == 0)
            for length in [4500, 4096, 3000, 10, 0] {
                #expect(readBytes(path) != nil)
                #expect(truncate(path, off_t(length)) == 0)
                #expect(readBytes(path) == Array(bytes[..<length]), "after truncate to \(length)")
            }
        }
    }

    @Test func sameSizeChangeByAnotherDatabaseAfterAWriteIsSeen() throws {
        try withNotesMount { m in
            let path = m.path("shared.md")
            #expect(writeFile(path, "aaaa version 1") == 0)
            usleep(200_000)  // the store is sent
            #expect(readFile(path) == "aaaa version 1")
            let id = try #require(note(m.database, titled: "shared")?.recordID)
            let other = try openDatabase(m.databasePath)
            defer { try? other.close() }
            for number in 2..<6 {
                var record = try other.record(for: id)
                record["text"] = .string("bbbb version \(number)")
                try other.modify(saving: [record])
                let seen = eventually(5) { readFile(path) == "bbbb version \(number)" }
                #expect(seen, "still \(readFile(path) ?? "nil") after the other handle saved version \(number)")
                #expect(try sh("cat \(shellQuoted(path))").out == "bbbb version \(number)")
                // And through the mount again, same size: the new bytes, not a stored older version.
                #expect(writeFile(path, "cccc version \(number)") == 0)
                #expect(readFile(path) == "cccc version \(number)")
                usleep(100_000)
                #expect(readFile(path) == "cccc version \(number)")
            }
        }
    }

    @Test func sameSizeChangeByTheCLIAfterAWriteIsSeen() throws {
        let binary = notesfsBinary
        try withNotesMount { m in
            let path = m.path("cli.md")
            #expect(writeFile(path, "mount wrote this") == 0)
            usleep(200_000)
            #expect(readFile(path) == "mount wrote this")
            let result = try run([binary, "note", "new", "cli", "--text", "CLI wrote this!!", "--force", "--db", m.databasePath])
            #expect(result.status == 0, "\(result)")
            let seen = eventually(5) { readFile(path) == "CLI wrote this!!" }
            #expect(seen, "still \(readFile(path) ?? "nil") after the CLI saved")
            #expect(try sh("cat \(shellQuoted(path))").out == "CLI wrote this!!")
        }
    }

    /// Whether the first page of the file open as `fd` is in the kernel's page cache (mincore of a
    /// mapping, which faults nothing in); nil when that cannot be told.
    static func firstPageIsCached(_ fd: Int32) -> Bool? {
        guard let page = mmap(nil, 4096, PROT_READ, MAP_SHARED, fd, 0), page != MAP_FAILED else { return nil }
        defer { munmap(page, 4096) }
        var vector: UInt8 = 0
        guard mincore(page, 4096, &vector) == 0 else { return nil }
        return vector & 1 == 1
    }

    static let noatime = NotesFileSystem.Options(noAccessTime: true)

    @Test(arguments: [false, true])
    func withNoatimeANoteFirstOpenedSinceTheMountIsCachedBeforeItIsRead(singleThread: Bool) throws {
        let small = Self.version(1, count: 3000)
        let large = Self.version(2, count: 200_000)  // above the 128 KiB stored at open
        try withDatabaseDirectory { db in
            try withNotesMount(databasePath: db) { m in
                #expect(writeBytes(m.path("small.md"), small) == 0)
                #expect(writeBytes(m.path("large.md"), large) == 0)
            }
            try withNotesMount(databasePath: db, options: Self.noatime, mountOptions: ["noatime"], singleThread: singleThread) { m in
                for (name, bytes, cached) in [("small.md", small, true), ("large.md", large, false)] {
                    let before = try #require(statOf(m.path(name)).0)
                    let fd = open(m.path(name), O_RDONLY | O_CLOEXEC)
                    #expect(fd >= 0)
                    defer { close(fd) }
                    #expect(Self.firstPageIsCached(fd) == cached, "\(name): opened, not read yet")
                    #expect(readBytes(m.path(name)) == bytes, "\(name)")
                    // noatime: the read moved nothing, in the kernel's view or the daemon's.
                    let after = try #require(statOf(m.path(name)).0)
                    #expect(nanoseconds(after.st_atim) == nanoseconds(before.st_atim), "\(name)")
                    try m.mount.notifier.invalidateInode(Inode(after.st_ino), offset: -1)  // ask the daemon
                    #expect(nanoseconds(try #require(statOf(m.path(name)).0).st_atim) == nanoseconds(before.st_atim), "\(name)")
                }
                // Changed by another handle, then opened again: the new bytes, not the stored ones.
                let id = try #require(note(m.database, titled: "small")?.recordID)
                let other = try openDatabase(m.databasePath)
                defer { try? other.close() }
                var record = try other.record(for: id)
                record["text"] = .string(String(decoding: Self.version(3, count: 3000), as: UTF8.self))
                try other.modify(saving: [record])
                let seen = eventually(5) { readBytes(m.path("small.md")) == Self.version(3, count: 3000) }
                #expect(seen, "the stored bytes outlived a change by another handle")
            }
            // Without noatime the first read reaches the daemon (it moves the atime): nothing is stored at open.
            try withNotesMount(databasePath: db) { m in
                let fd = open(m.path("small.md"), O_RDONLY | O_CLOEXEC)
                #expect(fd >= 0)
                defer { close(fd) }
                #expect(Self.firstPageIsCached(fd) == false)
            }
        }
    }

    @Test(arguments: [false, true])
    func coldNotesOpenedByManyReadersAtOnceReadWhole(singleThread: Bool) throws {
        let count = 40
        try withDatabaseDirectory { db in
            try withNotesMount(databasePath: db) { m in
                for n in 0..<count { #expect(writeBytes(m.path("n\(n).md"), Self.version(n, count: 1000 + 97 * n)) == 0) }
            }
            try withNotesMount(databasePath: db, options: Self.noatime, mountOptions: ["noatime"], singleThread: singleThread) { m in
                let failures = Mutex(0)
                DispatchQueue.concurrentPerform(iterations: 6) { reader in
                    for step in 0..<count {
                        let n = (step * (reader + 1) + reader) % count
                        if readBytes(m.path("n\(n).md")) != Self.version(n, count: 1000 + 97 * n) { failures.withLock { $0 += 1 } }
                    }
                }
                #expect(failures.withLock { $0 } == 0)
            }
        }
    }
}
