import Sync
import TestSupport
import Testing

@Suite struct TextMergeTests {
    static let base = "one\ntwo\nthree\nfour\nfive\n"

    @Test(arguments: [
        // (local, server, merged): edits that do not overlap merge cleanly.
        ("ONE\ntwo\nthree\nfour\nfive\n", "one\ntwo\nthree\nfour\nFIVE\n", "ONE\ntwo\nthree\nfour\nFIVE\n"),
        ("one\ntwo\nthree\nfour\nfive\nsix\n", "zero\none\ntwo\nthree\nfour\nfive\n", "zero\none\ntwo\nthree\nfour\nfive\nsix\n"),
        ("one\nthree\nfour\nfive\n", "one\ntwo\nthree\nfour\n5\n", "one\nthree\nfour\n5\n"),
        ("one\ntwo\nthree\nfour\nfive\n", "one\ntwo\nthree\nfour\nfive\n", "one\ntwo\nthree\nfour\nfive\n"),
        ("one\nTWO\nthree\nfour\nfive\n", "one\nTWO\nthree\nfour\nfive\n", "one\nTWO\nthree\nfour\nfive\n"),
        ("one\ntwo\nthree\nfour\nfive", "one\ntwo\nTHREE\nfour\nfive\n", "one\ntwo\nTHREE\nfour\nfive"),
        // Both appended: both lines, the server's first.
        (
            "one\ntwo\nthree\nfour\nfive\nlocal end\n", "one\ntwo\nthree\nfour\nfive\nserver end\n",
            "one\ntwo\nthree\nfour\nfive\nserver end\nlocal end\n"
        ),
    ])
    func nonOverlappingEditsMerge(local: String, server: String, merged: String) {
        #expect(TextMerge.merge(base: Self.base, local: local, server: server) == merged)
    }

    @Test(arguments: [
        ("one\nTWO local\nthree\nfour\nfive\n", "one\nTWO server\nthree\nfour\nfive\n"),
        ("", "one\ntwo\nthree\nfour\nfive changed\n"),
    ])
    func overlappingEditsConflict(local: String, server: String) {
        #expect(TextMerge.merge(base: Self.base, local: local, server: server) == nil)
    }

    @Test func aSideThatDidNotChangeTakesTheOther() {
        #expect(TextMerge.merge(base: "a", local: "a", server: "b") == "b")
        #expect(TextMerge.merge(base: "a", local: "c", server: "a") == "c")
    }
}
