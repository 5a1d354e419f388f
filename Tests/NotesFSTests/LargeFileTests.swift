/// Large and sparse files through the mount: the maximum file size (`EFBIG` beyond it, the daemon
/// alive afterwards), sparse growth that costs no memory, and large files saved in full.

import FUSE
import Foundation
import Glibc
import Notes
import RecordStore
import TestSupport
import Testing

/// The bound on the daemon's peak RSS documented in the README's mount section and beside
/// `ContentBuffer`: it does not depend on file sizes.
let documentedPeakRSSBound: Int64 = 200 << 20

/// Whether the `count` bytes of `path` at `offset` are all zero (and all there).
private func isZeroRange(_ path: String, offset: Int64, count: Int) -> Bool {
    guard let bytes = readRange(path, offset: offset, count: count) else { return false }
    return bytes.count == count && bytes.allSatisfy { $0 == 0 }
}

// Serialized: these write gigabytes to the test disk; one at a time keeps the fsync latency of
// the suites running beside them bounded.
@Suite(.tags(.mount), .needsFUSE, .serialized) struct LargeFileTests {
    @Test func truncateToAPetabyteAndWritingPastATerabyteFailWithEFBIG() throws {
        try withChildMount { child in
            let note = child.path + "/x.md"
            #expect(writeFile(child.path + "/other.md", "still here\n") == 0)
            #expect(try run(["/usr/bin/touch", note]).status == 0)
            let truncate = try run(["/usr/bin/truncate", "-s", "1P", note])
            #expect(truncate.status != 0)
            #expect(truncate.stderr.contains("File too large"), "\(truncate)")
            let dd = try sh("dd if=/dev/zero of=\(shellQuoted(note)) bs=1 seek=1000000000000 count=1 conv=notrunc")
            #expect(dd.status != 0)
            #expect(dd.stderr.contains("File too large"), "\(dd)")
            // The same through the system calls, past the 64 GiB maximum.
            #expect(errnoOf { Glibc.truncate(note, off_t(1) << 50) } == EFBIG)
            let fd = open(note, O_WRONLY)
            #expect(fd >= 0)
            var byte: UInt8 = 1
            #expect(pwrite(fd, &byte, 1, off_t(1) << 37) == -1 && errno == EFBIG)
            #expect(close(fd) == 0)
            // Hostile offsets near the top of off_t: no overflow in the daemon.
            let reader = open(note, O_RDONLY)
            #expect(reader >= 0)
            var buffer = [UInt8](repeating: 0, count: 64)
            #expect(pread(reader, &buffer, 64, off_t(Int64.max - 8)) <= 0)
            #expect(close(reader) == 0)
            let writer = open(note, O_WRONLY)
            #expect(pwrite(writer, &buffer, 64, off_t(Int64.max - 8)) == -1)
            #expect(close(writer) == 0)
            // The daemon answers afterwards.
            #expect(processExists(child.pid))
            #expect(readFile(child.path + "/other.md") == "still here\n")
            #expect(statOf(note).0?.st_size == 0)
            #expect(writeFile(note, "fine\n") == 0)
            #expect(readFile(note) == "fine\n")
        }
    }

    @Test func aByteWrittenAtFourGiBIsSavedWithItsHoleAcrossARemount() throws {
        let fourGiB: Int64 = 4 << 30
        try withChildMount(timeout: 600) { child in
            let path = child.path + "/sparse.bin"
            let fd = open(path, O_CREAT | O_WRONLY, 0o644)
            #expect(fd >= 0)
            var byte: UInt8 = 0x5A
            #expect(pwrite(fd, &byte, 1, off_t(fourGiB)) == 1)
            #expect(close(fd) == 0)
            try child.remount(timeout: 600) { again in
                let path = again.path + "/sparse.bin"
                #expect(statOf(path).0?.st_size == off_t(fourGiB + 1))
                #expect(readRange(path, offset: fourGiB - 4, count: 8) == [0, 0, 0, 0, 0x5A])
                for offset: Int64 in [0, 1 << 20, (2 << 30) - 1000, 3 << 30] {
                    #expect(isZeroRange(path, offset: offset, count: 65536), "zeros at \(offset)")
                }
                print("sparse 4 GiB + 1 attachment: daemon peak RSS \(again.peakResidentBytes >> 20) MiB")
            }
        }
    }

    @Test func truncateToTenGiBKeepsTheDaemonsMemoryBounded() throws {
        let tenGiB: Int64 = 10 << 30
        try withChildMount(timeout: 900) { child in
            let path = child.path + "/x.bin"
            let result = try run(["/usr/bin/truncate", "-s", "10G", path], timeout: 900)
            #expect(result.status == 0, "\(result)")
            #expect(statOf(path).0?.st_size == off_t(tenGiB))
            for offset: Int64 in [0, 5 << 30, tenGiB - 65536] {
                #expect(isZeroRange(path, offset: offset, count: 65536), "zeros at \(offset)")
            }
            #expect(readRange(path, offset: tenGiB - 10, count: 100)?.count == 10)
            let peak = child.peakResidentBytes
            print("truncate -s 10G: daemon peak RSS \(peak >> 20) MiB")
            #expect(peak > 0 && peak < documentedPeakRSSBound, "peak RSS \(peak) bytes")
        }
    }

    @Test func aOneGigabyteFileIsWrittenReadBackAndSaved() throws {
        try withChildMount(timeout: 900) { child in
            let scratch = makeTemporaryDirectory("notesfsbig")
            defer { try? FileManager.default.removeItem(atPath: scratch) }
            let source = scratch + "/big.bin"
            #expect(try sh("head -c 1000000000 /dev/urandom > \(shellQuoted(source))", timeout: 300).status == 0)
            let target = child.path + "/big.bin"
            let copy = try run(["/bin/cp", source, target], timeout: 900)
            #expect(copy.status == 0, "\(copy)")
            let afterSave = child.peakResidentBytes
            // Read back through the mount (from the saved asset) and compared byte for byte.
            let compare = try run(["/usr/bin/cmp", source, target], timeout: 900)
            #expect(compare.status == 0, "\(compare)")
            let sums = try sh("sha256sum < \(shellQuoted(source)); sha256sum < \(shellQuoted(target))", timeout: 900)
            let lines = sums.out.split(separator: "\n")
            #expect(lines.count == 2 && lines[0] == lines[1], "\(sums)")
            let peak = child.peakResidentBytes
            print("1 GB file: daemon peak RSS \(afterSave >> 20) MiB after write + save, \(peak >> 20) MiB after reading it back")
            #expect(peak > 0 && peak < documentedPeakRSSBound, "peak RSS \(peak) bytes")
        }
    }
}
