import Foundation
import RecordStore
import Testing

/// `UUID.random()` makes version-4 UUIDs of the RFC 4122 variant, as Foundation's `UUID()` does,
/// and never the same one twice.
@Suite struct RandomUUIDTests {
    @Test func versionFourAndDistinct() {
        var seen = Set<UUID>()
        var bitsSeen = (set: UInt8(0), clear: UInt8(0))
        for _ in 0..<2_000 {
            let uuid = UUID.random()
            let bytes = withUnsafeBytes(of: uuid.uuid) { Array($0) }
            #expect(bytes[6] >> 4 == 4)
            #expect(bytes[8] >> 6 == 0b10)
            let text = uuid.uuidString
            #expect(Array(text)[14] == "4")
            #expect("89AB".contains(Array(text)[19]))
            #expect(UUID(uuidString: text) == uuid)
            seen.insert(uuid)
            // The random bits are random: each bit of byte 0 is seen both set and clear.
            bitsSeen.set |= bytes[0]
            bitsSeen.clear |= ~bytes[0]
        }
        #expect(seen.count == 2_000)
        #expect(bitsSeen.set == 0xFF && bitsSeen.clear == 0xFF)
    }
}
