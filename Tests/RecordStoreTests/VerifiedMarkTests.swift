import Foundation
import Testing

@testable import RecordStore

/// The verified mark in the lock file: read back as written, and refused when it is not one of
/// this boot or not well formed (an open then checks every line's record files again).
@Suite struct VerifiedMarkTests {
    @Test func aMarkIsReadAsWrittenAndARefusedOneIsNone() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("mark-\(UUID().uuidString)").path
        let fd = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        try #require(fd >= 0)
        defer {
            close(fd)
            unlink(path)
        }
        let boot = try #require(VerifiedMark.currentBoot)
        VerifiedMark.write(fd, generation: 12, offset: 123_456)
        #expect(VerifiedMark.read(fd) == VerifiedMark(boot: boot, generation: 12, offset: 123_456))
        // A shorter mark over a longer one leaves no digit behind.
        VerifiedMark.write(fd, generation: 3, offset: 7)
        #expect(VerifiedMark.read(fd) == VerifiedMark(boot: boot, generation: 3, offset: 7))
        VerifiedMark.advance(fd, generation: 3, from: 7, to: 90)
        #expect(VerifiedMark.read(fd)?.offset == 90)
        VerifiedMark.advance(fd, generation: 3, from: 7, to: 200)  // not at 7: stays
        #expect(VerifiedMark.read(fd)?.offset == 90)

        func written(_ text: String) -> VerifiedMark? {
            let bytes = Array(text.utf8) + [UInt8](repeating: 0x20, count: max(0, 128 - text.utf8.count))
            _ = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
            return VerifiedMark.read(fd)
        }
        #expect(written("notesfs-verified \(boot) 3 90\n") == VerifiedMark(boot: boot, generation: 3, offset: 90))
        #expect(written("notesfs-verified 00000000-0000-0000-0000-000000000000 3 90\n") == nil)  // another boot
        #expect(written("notesfs-verified \(boot) 3 -1\n") == nil)
        #expect(written("notesfs-verified \(boot) 3 9x\n") == nil)
        #expect(written("notesfs-verified \(boot) 3 90\nextra\n") == nil)
        #expect(written("other \(boot) 3 90\n") == nil)
        #expect(written("notesfs-verified \(boot) 3\n") == nil)
    }
}
