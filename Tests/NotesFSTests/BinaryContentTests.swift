/// Content is bytes: any byte sequence written to a note or an attachment reads back identically
/// after close, unmount and a `kill -9` after `fsync`. Valid UTF-8 notes stay `text`; other bytes go
/// to the note's `content` asset.

import FUSE
import Foundation
import Glibc
import Notes
import RecordStore
import TestSupport
import Testing

/// Deterministic pseudo-random bytes (xorshift), so a failure is reproducible.
func pseudoRandomBytes(_ count: Int, seed: UInt64) -> [UInt8] {
    var state = seed | 1
    return (0..<count).map { _ in
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return UInt8(truncatingIfNeeded: state >> 24)
    }
}

/// Files whose bytes must survive: not UTF-8, UTF-16 with a BOM, random, and plain UTF-8 text.
let losslessSamples: [(name: String, bytes: [UInt8])] = [
    ("latin1.md", Array("caf".utf8) + [0xE9, 0x0A]),
    ("utf16.md", [0xFF, 0xFE] + Array("hi\n".utf16).flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }),
    ("random.md", pseudoRandomBytes(70_000, seed: 7)),
    ("text.md", Array("# Plain\ncafé ✓\n".utf8)),
    ("random.bin", pseudoRandomBytes(3 << 20, seed: 11)),
]

/// Opens `path`, writes `bytes`, fsyncs; returns the open descriptor (or -1).
private func writeAndFsync(_ path: String, _ bytes: [UInt8]) -> Int32 {
    let fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0o644)
    guard fd >= 0 else { return -1 }
    var done = 0
    while done < bytes.count {
        let n = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress! + done, bytes.count - done, off_t(done)) }
        guard n > 0 else { return -1 }
        done += n
    }
    guard fsync(fd) == 0 else { return -1 }
    return fd
}

@Suite(.tags(.mount), .needsFUSE) struct BinaryContentTests {
    @Test(arguments: [true, false])
    func everyByteSurvivesARemount(killing: Bool) throws {
        try withChildMount { child in
            var descriptors: [Int32] = []
            for sample in losslessSamples {
                let fd = writeAndFsync(child.path + "/" + sample.name, sample.bytes)
                #expect(fd >= 0, "\(sample.name): errno \(errno)")
                descriptors.append(fd)
            }
            if !killing {
                for fd in descriptors { #expect(close(fd) == 0) }
            }
            try child.remount(killing: killing) { again in
                for sample in losslessSamples {
                    let bytes = readBytes(again.path + "/" + sample.name)
                    let same = bytes == sample.bytes
                    #expect(same, "\(sample.name): \(bytes?.count ?? -1) bytes read, \(sample.bytes.count) written")
                }
            }
            if killing {
                for fd in descriptors { close(fd) }
            }
            let database = try openDatabase(child.databasePath)
            defer { try? database.close() }
            #expect(note(database, titled: "text")?.text == "# Plain\ncafé ✓\n")
            #expect(note(database, titled: "text")?.content == nil)
            for title in ["latin1", "utf16", "random"] {
                #expect(note(database, titled: title)?.content != nil, "\(title) is kept as bytes")
                #expect(note(database, titled: title)?.record["text"] == nil, "\(title) has no text field")
            }
        }
    }

    @Test func aNoteSwitchesBetweenTextAndBytes() throws {
        try withNotesMount { m in
            let path = m.path("switch.md")
            let binary = Array("caf".utf8) + [0xE9, 0x00, 0xFF]
            for round in 0..<3 {
                let text = Array("round \(round): plain text\n".utf8)
                #expect(writeBytes(path, text) == 0)
                #expect(readBytes(path) == text)
                #expect(note(m.database, titled: "switch")?.text == String(decoding: text, as: UTF8.self))
                #expect(note(m.database, titled: "switch")?.content == nil)
                #expect(writeBytes(path, binary + [UInt8(round)]) == 0)
                #expect(readBytes(path) == binary + [UInt8(round)])
                #expect(note(m.database, titled: "switch")?.content?.size == Int64(binary.count + 1))
                #expect(statOf(path).0?.st_size == off_t(binary.count + 1))
            }
        }
    }

    @Test func aTextNoteLargerThanTheInlineLimitIsKeptAsBytes() throws {
        let databasePath = makeTemporaryDirectory("notesfsdb") + "/db"
        defer { try? FileManager.default.removeItem(atPath: (databasePath as NSString).deletingLastPathComponent) }
        let line = Array("0123456789abcdef ✓ large note line\n".utf8)
        let bytes = Array([[UInt8]](repeating: line, count: (Note.maxInlineTextBytes / line.count) + 10).joined())
        try withNotesMount(databasePath: databasePath) { m in
            #expect(writeBytes(m.path("large.md"), bytes) == 0)
            let same = readBytes(m.path("large.md")) == bytes
            #expect(same)
            #expect(note(m.database, titled: "large")?.content?.size == Int64(bytes.count))
        }
        try withNotesMount(databasePath: databasePath) { m in
            let same = readBytes(m.path("large.md")) == bytes
            #expect(same)
            // Appending through the mount loads the asset and saves the whole.
            let fd = open(m.path("large.md"), O_WRONLY | O_APPEND)
            #expect(fd >= 0)
            #expect(write(fd, "tail\n", 5) == 5)
            #expect(close(fd) == 0)
            let appended = readBytes(m.path("large.md")) == bytes + Array("tail\n".utf8)
            #expect(appended)
        }
    }

    @Test func renamingBinaryContentOntoANoteKeepsEveryByte() throws {
        try withNotesMount { m in
            #expect(writeFile(m.path("target.md"), "old text\n") == 0)
            let bytes: [UInt8] = [0x00, 0xC3, 0x28, 0xFF, 0x0A]
            #expect(writeBytes(m.path("incoming.tmp"), bytes) == 0)
            #expect(renameErrno(m.path("incoming.tmp"), m.path("target.md")) == 0)
            #expect(readBytes(m.path("target.md")) == bytes)
            #expect(note(m.database, titled: "target")?.content?.size == Int64(bytes.count))
        }
    }
}
