import Foundation
import Testing

@testable import Notes

/// The names a file may be a suffixed namesake of (``NotesSearchIndex/bases(ofName:)``): its key,
/// then its key cut at each " (" from the end, as Foundation's backwards `range(of:)` cut it.
@Suite struct NameBasesTests {
    /// The cut as it was made before, with Foundation.
    static func foundationBases(_ name: String) -> [String] {
        let key = LinkResolver.key(of: name)
        var bases = [key]
        var rest = Substring(key)
        while let open = rest.range(of: " (", options: .backwards) {
            rest = rest[..<open.lowerBound]
            bases.append(String(rest))
        }
        return bases
    }

    @Test(arguments: [
        "Plan (ab).md", "Plan (ab) (cd).md", "a (b", "(x)", " (", " ( (", "Caf\u{E9} (x).md", "Cafe\u{301} (x).md", "plan.md", "",
        "x", "\u{65E5}\u{672C} (\u{8A9E}).md", "a  ((b", "a (\u{301}b (c)", "a \u{301}(b", "\u{301} (x)",
    ])
    func basesAreTheKeyCutAtEachParenthesisFromTheEnd(_ name: String) {
        #expect(NotesSearchIndex.bases(ofName: name) == Self.foundationBases(name))
    }

    @Test func aSuffixedNameHasItsBaseAmongItsBases() {
        #expect(NotesSearchIndex.bases(ofName: "Plan (ab) (cd).md") == ["plan (ab) (cd)", "plan (ab)", "plan"])
    }
}
