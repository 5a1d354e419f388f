import Foundation
import Testing

@testable import NotesCLI

/// Dates as the commands print them: UTC, ISO 8601, microseconds, padded by hand.
@Suite struct FormattingTests {
    @Test func datesAreISO8601InUTCWithMicroseconds() {
        #expect(Formatting.iso(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000000Z")
        #expect(Formatting.iso(Date(timeIntervalSince1970: 1_796_527_540.25)) == "2026-12-06T03:25:40.250000Z")
        #expect(Formatting.iso(Date(timeIntervalSince1970: 951_868_799.000007)) == "2000-02-29T23:59:59.000007Z")
        #expect(Formatting.iso(Date(timeIntervalSince1970: 59.9999996)) == "1970-01-01T00:01:00.000000Z")
        #expect(Formatting.short(Date(timeIntervalSince1970: 1_796_527_540.25)) == "2026-12-06 03:25:40")
    }
}
