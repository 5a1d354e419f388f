/// No global stall: while one file's large save runs (hashing and copying its bytes into an asset),
/// operations on other files are answered.

import FUSE
import Foundation
import Glibc
import Synchronization
import TestSupport
import Testing

@Suite(.tags(.mount), .needsFUSE) struct StallTests {
    @Test func listingAndReadingCompleteWhileAOneGigabyteSaveRuns() throws {
        try withChildMount(timeout: 900) { child in
            let folder = child.path + "/work"
            #expect(mkdir(folder, 0o755) == 0)
            #expect(writeFile(folder + "/small.md", "small note\n") == 0)
            // Written through the mount with pwrite, 1 MiB at a time.
            let path = folder + "/big.bin"
            let fd = open(path, O_CREAT | O_WRONLY, 0o644)
            #expect(fd >= 0)
            let chunk = pseudoRandomBytes(1 << 20, seed: 3)
            for index in 0..<1000 {
                var block = chunk
                block[0] = UInt8(truncatingIfNeeded: index)
                block[1] = UInt8(truncatingIfNeeded: index >> 8)
                let n = block.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(index) << 20) }
                guard n == block.count else {
                    Issue.record("pwrite \(index): \(n), errno \(errno)")
                    break
                }
            }
            // close(2) waits for the save (flush): run it on another thread.
            let saved = Atomic<Bool>(false)
            let closeResult = Atomic<Int32>(-2)
            let closer = Thread {
                closeResult.store(close(fd), ordering: .sequentiallyConsistent)
                saved.store(true, ordering: .sequentiallyConsistent)
            }
            closer.start()
            usleep(300_000)  // let the flush reach the daemon; the save of 1 GB then hashes and copies
            let listing = try run(["/bin/ls", "-l", folder], timeout: 600)
            let cat = try run(["/bin/cat", folder + "/small.md"], timeout: 600)
            let savedBeforeAnswers = saved.load(ordering: .sequentiallyConsistent)
            #expect(listing.status == 0 && listing.out.contains("small.md") && listing.out.contains("big.bin"), "\(listing)")
            #expect(cat.status == 0 && cat.out == "small note\n", "\(cat)")
            #expect(!savedBeforeAnswers, "the save finished before ls and cat answered: the test proved nothing")
            #expect(eventually(600) { saved.load(ordering: .sequentiallyConsistent) })
            #expect(closeResult.load(ordering: .sequentiallyConsistent) == 0)
            #expect(statOf(path).0?.st_size == 1000 << 20)
            var expected = chunk
            expected[0] = 0xE7
            expected[1] = 0x03
            #expect(readRange(path, offset: 999 << 20, count: 1 << 20) == expected)
        }
    }

    @Test func concurrentWritesAndSavesOfOneFileLoseNothing() throws {
        try withNotesMount { m in
            let path = m.path("shared.bin")
            let blocks = 8
            let blockSize = 300_000  // past the in-memory limit together: the buffer spills meanwhile
            #expect(writeBytes(path, []) == 0)
            let failures = Atomic<Int>(0)
            let done = Atomic<Int>(0)
            for index in 0..<blocks {
                Thread {
                    defer { done.add(1, ordering: .sequentiallyConsistent) }
                    let fd = open(path, O_WRONLY)
                    guard fd >= 0 else {
                        failures.add(1, ordering: .relaxed)
                        return
                    }
                    let block = [UInt8](repeating: UInt8(index + 1), count: blockSize)
                    for piece in stride(from: 0, to: blockSize, by: 50_000) {
                        let n = block.withUnsafeBytes { pwrite(fd, $0.baseAddress! + piece, 50_000, off_t(index * blockSize + piece)) }
                        if n != 50_000 { failures.add(1, ordering: .relaxed) }
                        // A save (flush: close of a duplicate) while the others write.
                        if close(dup(fd)) != 0 { failures.add(1, ordering: .relaxed) }
                    }
                    if close(fd) != 0 { failures.add(1, ordering: .relaxed) }
                }.start()
            }
            #expect(eventually(120) { done.load(ordering: .sequentiallyConsistent) == blocks })
            #expect(failures.load(ordering: .relaxed) == 0)
            var expected: [UInt8] = []
            for index in 0..<blocks { expected += [UInt8](repeating: UInt8(index + 1), count: blockSize) }
            let read = readBytes(path)
            let same = read == expected
            #expect(same, "read \(read?.count ?? -1) bytes")
            // And in the store, after the last close.
            let database = m.database
            let stored = try #require(database.metadata(identity: UInt64(statOf(path).0?.st_ino ?? 0)))
            #expect(stored.record["content"]?.assetValue?.size == Int64(blocks * blockSize))
        }
    }
}
