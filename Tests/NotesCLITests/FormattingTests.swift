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

    /// A snippet for a terminal: no C0, DEL or C1 control (an ESC or CSI sequence cannot reach
    /// the terminal), line ends and tabs as spaces, match marks as given, everything else kept.
    @Test func aSnippetIsPrintedWithoutControlCharacters() {
        let marked = "\u{2}match\u{3}"
        #expect(SearchCommand.printable(" a\tb\r\nc\n", start: "[", end: "]") == "a b  c")
        #expect(SearchCommand.printable("x " + marked + " y", start: "**", end: "**") == "x **match** y")
        #expect(SearchCommand.printable("red \u{1B}[31mtext\u{7F}\u{9B}2J\u{85}end\u{0}") == "red [31mtext2Jend")
        #expect(SearchCommand.printable("café cafe\u{301} 👩‍👩‍👧 日本") == "café cafe\u{301} 👩‍👩‍👧 日本")
        #expect(SearchCommand.printable("\u{1B}\u{1B}") == "")
    }

    /// Names print raw when glibc's `iswprint` holds for every scalar: the ASCII shortcut gives
    /// what the Unicode tables give, and a name with a newline or a line separator is quoted.
    @Test func printableScalarsAreThoseOfTheUnicodeTables() {
        let unprintable: Set<Unicode.GeneralCategory> = [.control, .lineSeparator, .paragraphSeparator, .surrogate, .unassigned]
        for value in UInt32(0)..<0x100 {
            guard let scalar = Unicode.Scalar(value) else { continue }
            #expect(ShellQuoting.isPrintable(scalar) == !unprintable.contains(scalar.properties.generalCategory), "U+\(value)")
        }
        #expect(ShellQuoting.shown("a\nb") == "'a'$'\\n''b'")
        #expect(ShellQuoting.needsQuoting("x\u{2028}y") && !ShellQuoting.needsQuoting("Crème brûlée.md"))
    }
}
