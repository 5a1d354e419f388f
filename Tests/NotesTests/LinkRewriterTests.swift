import Foundation
import TestSupport
import Testing

@testable import Notes

/// LinkRewriter: each rule of its doc comment, then round trips in random vaults (every rewritten
/// link resolves to the moved file).
@Suite struct LinkRewriterTests {
    /// The new destination of `link` (written as its own target, or `original`) in the note at
    /// `source` for the target now at `newPath` among `paths`.
    private func rewrite(_ link: NoteLink, _ original: String? = nil, from source: String, to newPath: String, in paths: [String])
        -> String?
    {
        let written = original ?? (link.style == .wiki ? link.target : "")
        return LinkRewriter.newTarget(for: link, writtenAs: Substring(written), from: source, to: newPath, in: PathSet(paths))
    }

    private func markdown(_ destination: String, from source: String, to newPath: String, in paths: [String]) -> String? {
        rewrite(.markdown(destination), destination, from: source, to: newPath, in: paths)
    }

    @Test func nothingToWriteWhenItStillResolves() {
        let paths = ["Archive/Plan B.md", "Home/Diary.md"]
        #expect(rewrite(.wiki("Plan B"), from: "Home/Diary.md", to: "Archive/Plan B.md", in: paths) == nil)
        #expect(rewrite(.wiki("", heading: "H"), from: "Archive/Plan B.md", to: "Archive/Plan B.md", in: paths) == nil)
    }

    @Test func wikiBareNameKeepsTheName() {
        let paths = ["Archive/Plan C.md", "Home/Diary.md"]
        #expect(rewrite(.wiki("Plan B"), from: "Home/Diary.md", to: "Archive/Plan C.md", in: paths) == "Plan C")
        #expect(rewrite(.wiki("Plan B.md"), from: "Home/Diary.md", to: "Archive/Plan C.md", in: paths) == "Plan C.md")
        #expect(rewrite(.wiki("pic.png", embed: true), from: "Home/Diary.md", to: "img/pic2.png", in: ["img/pic2.png"]) == "pic2.png")
    }

    @Test func wikiBareNameGrowsToTheShortestSuffixThatResolves() {
        let paths = ["Plan.md", "Work/Plan.md", "A/Old/Plan.md", "B/Old/Plan.md", "Home/Diary.md"]
        #expect(rewrite(.wiki("Plan"), from: "Home/Diary.md", to: "Work/Plan.md", in: paths) == "Work/Plan")
        #expect(rewrite(.wiki("Plan"), from: "Home/Diary.md", to: "B/Old/Plan.md", in: paths) == "B/Old/Plan")
        #expect(rewrite(.wiki("Plan"), from: "Home/Diary.md", to: "Plan.md", in: ["Work/Plan.md", "Plan.md"]) == nil)
    }

    @Test func wikiPathKeepsAtLeastItsComponents() {
        let paths = ["Archive/Work/Plan.md", "Home/Diary.md", "X/Y/Z/Deep.md"]
        #expect(rewrite(.wiki("Work/Plan B"), from: "Home/Diary.md", to: "Archive/Work/Plan.md", in: paths) == "Work/Plan")
        #expect(rewrite(.wiki("Old/Deep"), from: "Home/Diary.md", to: "X/Y/Z/Deep.md", in: paths) == "Z/Deep")
        #expect(
            rewrite(.wiki("A/B/C/D/Deep"), from: "Home/Diary.md", to: "X/Y/Z/Deep.md", in: paths) == "X/Y/Z/Deep", "at most the full path")
        #expect(
            rewrite(.wiki("/Old/Deep"), from: "Home/Diary.md", to: "X/Y/Z/Deep.md", in: paths) == "/X/Y/Z/Deep", "from the root stays so")
    }

    @Test func wikiRelativeStaysRelative() {
        let paths = ["Work/Plan.md", "Work/Sub/Diary.md", "Home/Plan.md"]
        #expect(rewrite(.wiki("../Old"), from: "Work/Sub/Diary.md", to: "Home/Plan.md", in: paths) == "../../Home/Plan")
        #expect(rewrite(.wiki("./Old"), from: "Work/Diary.md", to: "Work/Plan.md", in: paths) == "./Plan")
        #expect(
            rewrite(.wiki("../Old"), from: "Work/Diary.md", to: "Work/Plan.md", in: paths) == "./Plan",
            "../ that is no longer needed becomes ./")
    }

    @Test func wikiCannotCarryLinkCharacters() {
        #expect(rewrite(.wiki("Old"), from: "n.md", to: "Q#A.md", in: ["Q#A.md"]) == nil)
        #expect(rewrite(.wiki("Old"), from: "n.md", to: "A|B.md", in: ["A|B.md"]) == nil)
        #expect(rewrite(.wiki("Old"), from: "n.md", to: "x]]y.md", in: ["x]]y.md"]) == nil)
        #expect(rewrite(.wiki("Old"), from: "n.md", to: "x]", in: ["x]"]) == nil)
        // The forbidden part is only in a folder the shortest suffix leaves out.
        #expect(rewrite(.wiki("Old"), from: "n.md", to: "Q#A/Plan.md", in: ["Q#A/Plan.md"]) == "Plan")
        #expect(rewrite(.wiki("Old"), from: "n.md", to: "Q#A/Plan.md", in: ["Q#A/Plan.md", "Plan.md"]) == nil)
        // A markdown link can name them.
        #expect(markdown("Old.md", from: "n.md", to: "Q#A.md", in: ["Q#A.md"]) == "Q%23A.md")
        #expect(markdown("Old.md", from: "n.md", to: "A|B.md", in: ["A|B.md"]) == "A|B.md")
    }

    @Test func markdownRelative() {
        let paths = ["Work/Plan B.md", "Home/Diary.md", "Home/Sub/Other.md", "img/pic one.png"]
        #expect(markdown("./Old.md", from: "Home/Diary.md", to: "Work/Plan B.md", in: paths) == "../Work/Plan%20B.md")
        #expect(markdown("./Old.md", from: "Home/Diary.md", to: "Home/Sub/Other.md", in: paths) == "./Sub/Other.md")
        #expect(markdown("../Old.md", from: "Home/Diary.md", to: "Home/Sub/Other.md", in: paths) == "./Sub/Other.md")
        #expect(markdown("../img/pic%20two.png", from: "Home/Diary.md", to: "img/pic one.png", in: paths) == "../img/pic%20one.png")
        #expect(markdown("Old.md", from: "Home/Diary.md", to: "Home/Sub/Other.md", in: paths) == "Sub/Other.md", "inside the note's folder")
        #expect(
            markdown("Old.md", from: "Home/Diary.md", to: "Work/Plan B.md", in: paths) == "Plan%20B.md", "elsewhere: the shortest suffix")
        #expect(markdown("/Old.md", from: "Home/Diary.md", to: "Work/Plan B.md", in: paths) == "/Work/Plan%20B.md")
    }

    @Test func markdownWhenTheNoteMoves() {
        // `../Work/Plan B.md` written in Home/Diary.md; the diary moves to Home/Sub/Diary.md.
        let paths = ["Work/Plan B.md", "Home/Sub/Diary.md"]
        #expect(markdown("../Work/Plan%20B.md", from: "Home/Sub/Diary.md", to: "Work/Plan B.md", in: paths) == "../../Work/Plan%20B.md")
        let embed = NoteLink.markdown("../img/pic%20one.png", embed: true)
        let moved = rewrite(embed, "../img/pic%20one.png", from: "A/B/n.md", to: "img/pic one.png", in: ["img/pic one.png", "A/B/n.md"])
        #expect(moved == "../../img/pic%20one.png")
    }

    @Test func markdownEncodingFollowsTheOriginal() {
        let paths = ["Caf\u{E9} (old/Men\u{FC} 100%.md", "n.md"]
        let target = "Caf\u{E9} (old/Men\u{FC} 100%.md"
        #expect(markdown("Old%20x.md", from: "n.md", to: target, in: paths) == "Caf%C3%A9%20%28old/Men%C3%BC%20100%25.md")
        #expect(markdown("Caf\u{E9}%20x.md", from: "n.md", to: target, in: paths) == "Caf\u{E9}%20%28old/Men\u{FC}%20100%25.md")
        #expect(markdown("Old x.md", from: "n.md", to: target, in: paths) == "Caf\u{E9} (old/Men\u{FC} 100%25.md", "raw spaces: inside <…>")
        #expect(
            markdown("Old.md", from: "n.md", to: target, in: paths) == "Caf\u{E9}%20%28old/Men\u{FC}%20100%25.md", "spaces must be escaped")
        #expect(markdown("Old.md", from: "n.md", to: "A (b)/c<d>?.md", in: ["A (b)/c<d>?.md"]) == "A%20(b)/c%3Cd%3E?.md")
        #expect(markdown("Old%20x.md", from: "n.md", to: "A (b)/c?.md", in: ["A (b)/c?.md"]) == "A%20%28b%29/c%3F.md")
    }

    @Test func markdownAvoidsAURLScheme() {
        #expect(markdown("Old.md", from: "n.md", to: "http:x.md", in: ["http:x.md"]) == "/http:x.md")
    }

    @Test func aLinkToItselfWhenTheNoteIsRenamed() {
        let paths = ["Home/Journal.md", "Diary.md"]
        #expect(rewrite(.wiki("Diary"), from: "Home/Journal.md", to: "Home/Journal.md", in: paths) == "Journal")
        #expect(markdown("./Diary.md", from: "Home/Journal.md", to: "Home/Journal.md", in: paths) == "./Journal.md")
        #expect(rewrite(.wiki("", heading: "H"), from: "Home/Journal.md", to: "Home/Journal.md", in: paths) == nil)
    }

    @Test func aFileHiddenByANoteOfTheSameNameCannotBeNamed() {
        // `Work/Plan` (no extension) next to `Work/Plan.md`: every target without `.md` names the note.
        let paths = ["Work/Plan", "Work/Plan.md"]
        #expect(rewrite(.wiki("Old"), from: "n.md", to: "Work/Plan", in: paths) == nil)
        #expect(markdown("./Old", from: "n.md", to: "Work/Plan", in: paths) == nil)
        #expect(rewrite(.wiki("Old"), from: "n.md", to: "Work/Plan", in: ["Work/Plan", "Plan.md"]) == "Work/Plan")
    }

    @Test func headingOnlyLinkToAnotherNote() {
        #expect(rewrite(.wiki("", heading: "H"), from: "n.md", to: "Work/Plan.md", in: ["Work/Plan.md", "n.md"]) == "Plan")
    }

    @Test func aFolderRenameMovesManyFilesAtOnce() {
        // Work/ becomes Archive/Work 2026/; links into it from outside and inside.
        let before = ["Work/Plan.md", "Work/Sub/Deep.md", "Work/img/pic.png", "Home/Diary.md", "Plan.md"]
        let after = [
            "Archive/Work 2026/Plan.md", "Archive/Work 2026/Sub/Deep.md", "Archive/Work 2026/img/pic.png", "Home/Diary.md", "Plan.md",
        ]
        let world = PathSet(after)
        let cases: [(NoteLink, String, String, String, String?)] = [
            // link, as written, source after, target after, expected
            (.wiki("Work/Plan"), "Work/Plan", "Home/Diary.md", after[0], "Work 2026/Plan"),
            (.wiki("Deep"), "Deep", "Home/Diary.md", after[1], nil),  // still resolves
            (.wiki("Work/img/pic.png", embed: true), "Work/img/pic.png", "Home/Diary.md", after[2], "Work 2026/img/pic.png"),
            (.markdown("../Work/Sub/Deep.md"), "../Work/Sub/Deep.md", "Home/Diary.md", after[1], "../Archive/Work%202026/Sub/Deep.md"),
            (.markdown("./Sub/Deep.md"), "./Sub/Deep.md", after[0], after[1], nil),  // moved together
            (.markdown("../../Home/Diary.md"), "../../Home/Diary.md", after[1], "Home/Diary.md", "../../../Home/Diary.md"),
            (.wiki("/Work/Plan"), "/Work/Plan", "Home/Diary.md", after[0], "/Archive/Work 2026/Plan"),
        ]
        #expect(before.count == after.count)
        for (link, written, source, target, expected) in cases {
            let rewritten = LinkRewriter.newTarget(for: link, writtenAs: Substring(written), from: source, to: target, in: world)
            #expect(rewritten == expected, "\(written) in \(source)")
        }
    }

    // MARK: Round trips

    /// A random vault: notes and attachments in a few shared folders with shared names (so that
    /// names collide), in both cases and both Unicode forms, no two paths equal when folded.
    private func randomVault(_ random: inout SeededGenerator, count: Int) -> [String] {
        let folders = ["Work", "work", "Home", "Caf\u{E9}", "Cafe\u{301}s", "A B", "img", "x", "Deep", "Q#A", "Men\u{FC} (1)"]
        let names = ["Plan", "plan B", "Diary", "Caf\u{E9}", "Cafe\u{301}", "v1.2", "Notes (old)", "100%", "a|b", "x]]y", "Idea?", "<t>"]
        let attachments = ["pic.png", "Pic one.png", "doc.pdf", "data"]
        var paths: [String] = []
        var folded = Set<String>()
        while paths.count < count {
            let depth = Int.random(in: 0...3, using: &random)
            let folder = (0..<depth).map { _ in folders.randomElement(using: &random)! }
            let name =
                Bool.random(using: &random)
                ? names.randomElement(using: &random)! + ".md" : attachments.randomElement(using: &random)!
            let path = (folder + [name]).joined(separator: "/")
            if folded.insert(LinkResolver.fold(path)).inserted { paths.append(path) }
        }
        return paths
    }

    /// A link written in `source` that should reach `target`: a random form (wiki: a suffix, from
    /// the root, relative; markdown: relative, plain suffix, from the root; encoded or not).
    private func randomLink(to target: String, from source: String, _ random: inout SeededGenerator) -> (NoteLink, String) {
        let components = target.split(separator: "/").map(String.init)
        var last = components.last!
        let dropMD = last.hasSuffix(".md") && Bool.random(using: &random)
        if dropMD { last.removeLast(3) }
        let named = components.dropLast() + [last]
        let suffix = named.suffix(Int.random(in: 1...named.count, using: &random)).joined(separator: "/")
        let folder = LinkResolver.folder(of: source).split(separator: "/").map(String.init)
        var common = 0
        while common < folder.count, common < named.count - 1, folder[common] == named[common] { common += 1 }
        let relative = (Array(repeating: "..", count: folder.count - common) + named[common...]).joined(separator: "/")
        let dotRelative = relative.hasPrefix("../") ? relative : "./" + relative
        let decoded = [suffix, "/" + named.joined(separator: "/"), dotRelative].randomElement(using: &random)!
        if Bool.random(using: &random) {
            return (.wiki(decoded), decoded)
        }
        let style = ["Old%20x", "Old x", "Old", "\u{E9}%20"].randomElement(using: &random)!
        let written = LinkRewriter.encoded(decoded, like: Substring(style))
        return (.markdown(written), written)
    }

    /// Whether a wiki link can surely name `path` (no part of it has a character a wiki link
    /// cannot carry, so the full path can be written).
    private func wikiCanName(_ path: String) -> Bool {
        !["|", "#", "[[", "]]", "\n"].contains { path.contains($0) } && !path.hasSuffix("]")
    }

    /// About a thousand moved links from one seed (the quick run).
    @Test func roundTrips() {
        roundTrips(seed: 1)
    }

    /// Four thousand more.
    @Test(.tags(.slow), arguments: [2, 3, 4, 5])
    func moreRoundTrips(seed: UInt64) {
        roundTrips(seed: seed)
    }

    /// Random vaults of 300 paths; in each, random links that resolve, then a random file (often
    /// the target or the note) moved to a random new path; every rewritten link must resolve to
    /// the target's new path, and a link left alone must still resolve there unless a wiki link
    /// cannot name it.
    private func roundTrips(seed: UInt64) {
        var random = SeededGenerator(state: seed)
        var checked = 0
        var rewritten = 0
        var unnamed = 0
        for _ in 0..<5 {
            var paths = randomVault(&random, count: 300)
            var world = PathSet(paths)
            var folded = Set(paths.map(LinkResolver.fold))
            for _ in 0..<1000 {
                // A link that resolves, from a random note.
                var source = paths.randomElement(using: &random)!
                guard source.hasSuffix(".md") else { continue }
                var target = paths.randomElement(using: &random)!
                let (link, written) = randomLink(to: target, from: source, &random)
                guard LinkResolver.resolve(link, from: source, in: world) == target else { continue }
                // Move the target, the source or another file somewhere new.
                let moved = [target, source, paths.randomElement(using: &random)!].randomElement(using: &random)!
                let newPath = randomVault(&random, count: 1)[0]
                guard folded.insert(LinkResolver.fold(newPath)).inserted else { continue }
                folded.remove(LinkResolver.fold(moved))
                world.remove(moved)
                world.insert(newPath)
                paths[paths.firstIndex(of: moved)!] = newPath
                if source == moved { source = newPath }
                if target == moved { target = newPath }

                let result = LinkRewriter.newTarget(for: link, writtenAs: Substring(written), from: source, to: target, in: world)
                checked += 1
                if let result {
                    rewritten += 1
                    let decoded = link.style == .wiki ? result : result.removingPercentEncoding
                    #expect(decoded != nil, "\(result) does not decode")
                    var newLink = link
                    newLink.target = decoded ?? ""
                    let resolved = LinkResolver.resolve(newLink, from: source, in: world)
                    #expect(resolved == target, "\(written) in \(source) → \(result) should reach \(target)")
                } else if LinkResolver.resolve(link, from: source, in: world) != target {
                    unnamed += 1
                    #expect(link.style == .wiki && !wikiCanName(target), "\(written) in \(source): nil for \(target)")
                }
            }
        }
        #expect(checked > 500)
        #expect(unnamed < checked / 10, "only targets with | # ]] in their path go unwritten")
        #expect(rewritten > 200)
    }
}
