import Foundation
import Testing

@testable import Notes

/// File names sort by their UTF-8 bytes: ``Swift/String/precedesInByteOrder(_:)`` gives the order
/// `utf8.lexicographicallyPrecedes` gives, for every kind of string a name can be.
struct ByteOrderTests {
    static let samples: [String] = [
        "", "a", "A", "a.md", "a (1).md", "ab", "abc", "Z", "é", "e\u{301}", "ü", "日本", "日", "😀", "a\u{0}b", "a\u{0}",
        "note 10.md", "note 9.md", "Note 1.md", String(repeating: "x", count: 15), String(repeating: "x", count: 16),
        String(repeating: "é", count: 40), "\u{7F}", "\u{80}", "\u{FFFF}",
    ]

    @Test func itAgreesWithTheUTF8ViewsOrder() {
        for a in Self.samples {
            for b in Self.samples {
                #expect(
                    a.precedesInByteOrder(b) == a.utf8.lexicographicallyPrecedes(b.utf8), "\(a.debugDescription) < \(b.debugDescription)")
            }
        }
    }

    @Test func bridgedAndSubstringMadeStringsSortTheSame() {
        let bridged = NSString(string: "héllo wörld").description  // may be a bridged (non-native) string
        let sliced = String("xx héllo wörld".dropFirst(3))
        #expect(!bridged.precedesInByteOrder(sliced) && !sliced.precedesInByteOrder(bridged))
        #expect(bridged.precedesInByteOrder(sliced + "!"))
        #expect(!(sliced + "!").precedesInByteOrder(bridged))
    }
}
