/// `st_blocks` counts what is stored (NotesFileSystem.storedBlocks): a sparse file's holes cost
/// nothing, before and after close and after a remount, and no count exceeds the size rounded up.

import FUSE
import Foundation
import Glibc
import TestSupport
import Testing

@testable import NotesFS

@Suite struct StoredBlocksTests {
    @Test func aBufferCountsWhatItHoldsAndNeverMoreThanItsSize() throws {
        let directory = makeTemporaryDirectory("notesfsblocks")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // In memory: every byte is held.
        let small = ContentBuffer(Array(repeating: 7, count: 1000), spillDirectory: directory)
        #expect(small.storedBlocks == 2)
        // Spilled and sparse: the page written at 3 GiB, not 3 GiB.
        let sparse = ContentBuffer(spillDirectory: directory)
        try [UInt8(1)].withUnsafeBytes { bytes in try sparse.write(offset: 3 << 30, bytes) }
        #expect(sparse.isSpilled && sparse.count == (3 << 30) + 1)
        #expect(sparse.storedBlocks >= 1 && sparse.storedBlocks <= 128, "\(sparse.storedBlocks) blocks")
        try sparse.truncate(5 << 30)
        #expect(sparse.storedBlocks >= 1 && sparse.storedBlocks <= 128, "a sparse truncate stores nothing")
        // Spilled, then cut to 3 bytes: the temp file keeps a 4 KiB block, the count says one.
        let cut = ContentBuffer(Array(repeating: 7, count: 2 << 20), spillDirectory: directory)
        try cut.truncate(3)
        #expect(cut.isSpilled && cut.storedBlocks == 1)
    }

    @Test(.tags(.mount), .needsFUSE, arguments: ["sparse.bin", "sparse.md"])
    func aSparseFileCountsTheSameWhileOpenAfterCloseAndAfterARemount(_ name: String) throws {
        let offset: Int64 = 3 << 30
        try withDatabaseDirectory { db in
            var counts: [blkcnt_t] = []
            try withNotesMount(databasePath: db, timeout: 300) { m in
                let fd = open(m.path(name), O_CREAT | O_RDWR | O_CLOEXEC, 0o644)
                try #require(fd >= 0)
                var byte: UInt8 = 0x5A
                #expect(pwrite(fd, &byte, 1, off_t(offset)) == 1)
                var st = stat()
                #expect(fstat(fd, &st) == 0 && st.st_size == off_t(offset + 1))
                counts.append(st.st_blocks)
                #expect(close(fd) == 0)
                counts.append(statOf(m.path(name)).0?.st_blocks ?? -1)
            }
            try withNotesMount(databasePath: db, timeout: 300) { m in
                let st = statOf(m.path(name)).0
                #expect(st?.st_size == off_t(offset + 1))
                counts.append(st?.st_blocks ?? -1)
            }
            // Open (the spilled buffer), closed and remounted (the asset): the same page or so.
            #expect(counts.count == 3 && Set(counts).count == 1, "\(counts)")
            #expect(counts.allSatisfy { $0 >= 1 && $0 <= 128 }, "\(counts)")
        }
    }
}
