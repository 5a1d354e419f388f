import Foundation
import RecordStore
import TestSupport
import Testing

/// `String.canonicallyComposed` is Foundation's NFC, byte for byte (the indexes compare bytes),
/// with ASCII passed through as it is.
@Suite struct CanonicalCompositionTests {
    @Test(arguments: [
        "renamed 15.md", "", "a/b c.md", "Cafe\u{301}", "Caf\u{E9}", "\u{1100}\u{1161}\u{11A8}", "A\u{30A}\u{301}",
        "x\u{0}y", "Å", "\u{212B}", "e\u{301}\u{327}", "emoji \u{1F600}", "tab\there",
    ])
    func isFoundationsNFC(_ text: String) {
        #expect(Array(text.canonicallyComposed.utf8) == Array(text.precomposedStringWithCanonicalMapping.utf8))
    }

    @Test func decomposedAndPrecomposedNamesGiveTheSameBytes() {
        #expect(Array("Cafe\u{301}.md".canonicallyComposed.utf8) == Array("Caf\u{E9}.md".utf8))
        #expect("Cafe\u{301}".canonicallyComposed.unicodeScalars.count == 4)
    }

    @Test func randomStringsAgreeWithFoundation() {
        var generator = SeededGenerator(state: 33)
        let pieces = [
            "a", "Z", " ", ".", "/", "e", "\u{301}", "\u{327}", "\u{E9}", "\u{1100}", "\u{1161}", "\u{11A8}", "\u{212B}", "\u{2215}",
        ]
        for _ in 0..<500 {
            let text = (0..<Int.random(in: 0...12, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
            #expect(
                Array(text.canonicallyComposed.utf8) == Array(text.precomposedStringWithCanonicalMapping.utf8),
                "\(text.unicodeScalars.map { String($0.value, radix: 16) })")
        }
    }
}
