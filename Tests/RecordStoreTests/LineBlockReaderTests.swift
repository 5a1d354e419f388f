import Foundation
import TestSupport
import Testing

@testable import RecordStore

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// `LineBlockReader` hands out whole lines, in order, each once, whatever the block size; a line
/// over the limit is reported at its offset; a torn last line is left out.
@Suite struct LineBlockReaderTests {
    enum Outcome: Equatable {
        case lines([Data])
        case tooLong(at: Int)
    }

    /// Everything a reader of `bytes` hands out until the end or a line over the limit.
    static func readAll(_ bytes: Data, blockSize: Int, lineLimit: Int, from offset: Int = 0) throws -> Outcome {
        let path = makeTemporaryDirectory("lineblocks") + "/file"
        try bytes.write(to: URL(fileURLWithPath: path))
        let fd = open(path, O_RDONLY)
        defer { close(fd) }
        var reader = LineBlockReader(fd: fd, path: path, from: offset, end: bytes.count, lineLimit: lineLimit, blockSize: blockSize)
        var lines: [Data] = []
        while true {
            switch try reader.next() {
            case .end: return .lines(lines)
            case .tooLong(let at): return .tooLong(at: at)
            case .lines(let block):
                #expect(block.last == 0x0A)
                var start = block.startIndex
                while let newline = block[start...].firstIndex(of: 0x0A) {
                    lines.append(Data(block[start...newline]))
                    start = newline + 1
                }
                #expect(start == block.endIndex)
            }
        }
    }

    /// Lines of 0 to `longest` bytes (every 17th may be far longer than a block, the rest up to
    /// 40 bytes), each ending in a newline; the same for a seed on every run.
    static func randomLines(_ count: Int, longest: Int, seed: UInt64) -> [Data] {
        var state = seed
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407  // a 64-bit LCG
            return Int((state >> 33) % UInt64(bound + 1))
        }
        return (0..<count).map { i in
            let length = next(i % 17 == 0 ? longest : 40)
            return Data((0..<length).map { _ in UInt8(0x20 + next(0x5E)) } + [0x0A])
        }
    }

    @Test(arguments: [1, 7, 64, 4096]) func linesComeBackWholeAndInOrder(_ blockSize: Int) throws {
        let lines = Self.randomLines(300, longest: 700, seed: UInt64(blockSize))
        let file = lines.reduce(Data(), +)
        #expect(try Self.readAll(file, blockSize: blockSize, lineLimit: 1000) == .lines(lines))
        // From an offset that is the start of a line.
        let skipped = lines[0..<10].reduce(0) { $0 + $1.count }
        #expect(try Self.readAll(file, blockSize: blockSize, lineLimit: 1000, from: skipped) == .lines(Array(lines[10...])))
    }

    @Test(arguments: [1, 7, 64, 4096]) func aTornLastLineIsLeftOut(_ blockSize: Int) throws {
        let lines = Self.randomLines(50, longest: 300, seed: 99)
        let file = lines.reduce(Data(), +) + Data("torn, no newline".utf8)
        #expect(try Self.readAll(file, blockSize: blockSize, lineLimit: 1000) == .lines(lines))
    }

    @Test(arguments: [7, 64, 500]) func aLineOverTheLimitIsReportedAtItsStart(_ blockSize: Int) throws {
        let before = Self.randomLines(20, longest: 90, seed: 5)
        let start = before.reduce(0) { $0 + $1.count }
        // Over the limit with its newline, and with none (the file ends inside it).
        let long = Data(repeating: UInt8(ascii: "x"), count: 1500)
        let ended = before.reduce(Data(), +) + long + Data([0x0A]) + Data("after\n".utf8)
        #expect(try Self.readAll(ended, blockSize: blockSize, lineLimit: 1000) == .tooLong(at: start))
        let unended = before.reduce(Data(), +) + long
        #expect(try Self.readAll(unended, blockSize: blockSize, lineLimit: 1000) == .tooLong(at: start))
        // At the limit exactly (1,000 bytes and its newline) it is read.
        let atLimit = Data(repeating: UInt8(ascii: "y"), count: 1000) + Data([0x0A])
        #expect(try Self.readAll(before.reduce(Data(), +) + atLimit, blockSize: blockSize, lineLimit: 1000) == .lines(before + [atLimit]))
    }
}
