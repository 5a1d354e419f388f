/// A seeded, reproducible random operation tester (fsx-style): writes, truncates, reads, mmap
/// reads and writes, fsyncs and close/reopens on one file through the mount, compared byte for byte with a
/// shadow copy in memory. The file crosses the buffer's 1 MiB in-memory limit and switches between
/// UTF-8 text and binary bytes. Each file runs twice: with mmap reads and writes among the
/// operations, and without (plain `pread`/`pwrite` only, as fsx's `-R -W`). On a failure the seed
/// and the operations so far are printed. `scripts/fsx.sh [OPS] [SEED]` runs 100,000 operations
/// (`NOTESFS_FSX_OPS`, `NOTESFS_FSX_SEED`) outside CI.

import FUSE
import Foundation
import Glibc
import TestSupport
import Testing

private let operationCount = ProcessInfo.processInfo.environment["NOTESFS_FSX_OPS"].flatMap(Int.init) ?? 1500
/// Added to each case's seed (`NOTESFS_FSX_SEED`), to run other sequences.
private let seedOffset = ProcessInfo.processInfo.environment["NOTESFS_FSX_SEED"].flatMap(UInt64.init) ?? 0

@Suite(.tags(.mount), .needsFUSE) struct RandomOperationTests {
    @Test(arguments: [
        ("fsx.md", UInt64(1), true), ("fsx.bin", UInt64(2), true), ("fsx.md", UInt64(3), false), ("fsx.bin", UInt64(4), false),
    ])
    func randomOperationsMatchAShadowCopy(name: String, seed baseSeed: UInt64, mmap useMmap: Bool) throws {
        let seed = baseSeed &+ seedOffset
        try withNotesMount(timeout: max(600, Double(operationCount) / 10)) { m in  // the watchdog is for hangs: 100 ms an operation
            let path = m.path(name)
            var random = SeededGenerator(state: seed)
            var shadow: [UInt8] = []
            var log: [String] = []
            let maximum = 3 << 20
            var fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0o644)
            #expect(fd >= 0)
            func fail(_ what: String) {
                Issue.record(
                    "seed \(seed), \(name)\(useMmap ? "" : " (no mmap)"), after \(log.count) operations: \(what)\nlast operations:\n\(log.suffix(30).joined(separator: "\n"))"
                )
            }
            func check(offset: Int, count: Int, _ label: String) -> Bool {
                var buffer = [UInt8](repeating: 0xAA, count: count)
                let n = pread(fd, &buffer, count, off_t(offset))
                let expected = offset < shadow.count ? Array(shadow[offset..<min(shadow.count, offset + count)]) : []
                guard n == expected.count, Array(buffer[..<max(0, n)]) == expected else {
                    fail(
                        "\(label) at \(offset)+\(count): got \(n) bytes, expected \(expected.count), first difference at \(zip(buffer, expected).enumerated().first { $0.element.0 != $0.element.1 }.map { String($0.offset) } ?? "length")"
                    )
                    return false
                }
                return true
            }
            for _ in 0..<operationCount {
                var choice = Int.random(in: 0..<100, using: &random)
                // Without mmap, its share goes to plain reads (75..<82) and writes (82..<85).
                if !useMmap, (75..<85).contains(choice) { choice = choice < 82 ? 50 + (choice - 75) : 10 + (choice - 82) }
                switch choice {
                case 0..<40:  // write: text or binary, sometimes far past the end
                    let offset = Int.random(in: 0...min(maximum, shadow.count + (choice < 5 ? 1 << 20 : 4096)), using: &random)
                    let count = Int.random(in: 1...(choice < 10 ? 200_000 : 5000), using: &random)
                    let text = Bool.random(using: &random)
                    let bytes = (0..<count).map { _ in
                        text ? UInt8.random(in: 0x20...0x7E, using: &random) : UInt8.random(in: 0...255, using: &random)
                    }
                    log.append("write \(offset)+\(count) \(text ? "text" : "binary")")
                    let n = pwrite(fd, bytes, count, off_t(offset))
                    guard n == count else { return fail("pwrite returned \(n), errno \(errno)") }
                    if offset + count > shadow.count { shadow += [UInt8](repeating: 0, count: offset + count - shadow.count) }
                    shadow.replaceSubrange(offset..<offset + count, with: bytes)
                case 40..<50:  // truncate, up or down
                    let size = choice < 42 ? 0 : Int.random(in: 0...maximum, using: &random)
                    log.append("ftruncate \(size)")
                    guard ftruncate(fd, off_t(size)) == 0 else { return fail("ftruncate errno \(errno)") }
                    if size < shadow.count {
                        shadow.removeSubrange(size...)
                    } else {
                        shadow += [UInt8](repeating: 0, count: size - shadow.count)
                    }
                case 50..<75:  // read
                    let offset = Int.random(in: 0...shadow.count + 100, using: &random)
                    let count = Int.random(in: 1...150_000, using: &random)
                    log.append("read \(offset)+\(count)")
                    guard check(offset: offset, count: count, "read") else { return }
                case 75..<82:  // mmap read of a range (through the page cache)
                    guard !shadow.isEmpty else { continue }
                    let offset = Int.random(in: 0..<shadow.count, using: &random) & ~4095
                    let count = min(shadow.count - offset, Int.random(in: 1...65536, using: &random))
                    log.append("mmap read \(offset)+\(count)")
                    guard let map = mmap(nil, count, PROT_READ, MAP_SHARED, fd, off_t(offset)), map != MAP_FAILED else {
                        return fail("mmap errno \(errno)")
                    }
                    let mapped = Array(UnsafeRawBufferPointer(start: map, count: count))
                    munmap(map, count)
                    guard mapped == Array(shadow[offset..<offset + count]) else { return fail("mmap read at \(offset)+\(count) differs") }
                case 82..<85:  // mmap write inside the file, msync'd
                    guard !shadow.isEmpty else { continue }
                    let offset = Int.random(in: 0..<shadow.count, using: &random) & ~4095
                    let count = min(shadow.count - offset, Int.random(in: 1...20000, using: &random))
                    let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }
                    log.append("mmap write \(offset)+\(count)")
                    guard let map = mmap(nil, count, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off_t(offset)), map != MAP_FAILED else {
                        return fail("mmap for writing errno \(errno)")
                    }
                    bytes.withUnsafeBytes { map.copyMemory(from: $0.baseAddress!, byteCount: count) }
                    let synced = msync(map, count, MS_SYNC)
                    munmap(map, count)
                    guard synced == 0 else { return fail("msync errno \(errno)") }
                    shadow.replaceSubrange(offset..<offset + count, with: bytes)
                case 85..<88:
                    log.append("fsync")
                    guard fsync(fd) == 0 else { return fail("fsync errno \(errno)") }
                case 88..<95:  // close and reopen: a save, then the stored bytes
                    log.append("close + reopen")
                    guard close(fd) == 0 else { return fail("close errno \(errno)") }
                    fd = open(path, O_RDWR)
                    guard fd >= 0 else { return fail("reopen errno \(errno)") }
                default:  // size check
                    log.append("fstat")
                    var st = stat()
                    guard fstat(fd, &st) == 0, st.st_size == off_t(shadow.count) else {
                        return fail("fstat size \(st.st_size), expected \(shadow.count)")
                    }
                }
            }
            #expect(close(fd) == 0)
            // The whole file after the last save, from a fresh open.
            let stored = readBytes(path)
            let same = stored == shadow
            if !same { fail("final content: \(stored?.count ?? -1) bytes, expected \(shadow.count)") }
        }
    }
}
