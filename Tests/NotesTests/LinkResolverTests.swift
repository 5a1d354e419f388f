import Foundation
import Testing

@testable import Notes

/// LinkResolver: every rule of its doc comment, ties, case and Unicode equivalence.
@Suite struct LinkResolverTests {
    private func resolve(_ link: NoteLink, from source: String, in paths: [String]) -> String? {
        LinkResolver.resolve(link, from: source, in: PathSet(paths))
    }

    @Test func keys() {
        #expect(LinkResolver.key(of: "Plan B.md") == "plan b")
        #expect(LinkResolver.key(of: "PLAN B") == "plan b")
        #expect(LinkResolver.key(of: "Plan B.MD") == "plan b")
        #expect(LinkResolver.key(of: "pic.png") == "pic.png")
        #expect(LinkResolver.key(of: "x.md.md") == "x.md")
        #expect(LinkResolver.key(of: "Caf\u{E9}.md") == LinkResolver.key(of: "CAFE\u{301}"))
    }

    @Test func bareNameAnywhere() {
        let paths = ["Work/Plan B.md", "Home/Diary.md", "img/pic.png"]
        #expect(resolve(.wiki("Plan B"), from: "Home/Diary.md", in: paths) == "Work/Plan B.md")
        #expect(resolve(.wiki("Plan B.md"), from: "Home/Diary.md", in: paths) == "Work/Plan B.md")
        #expect(resolve(.wiki("Missing"), from: "Home/Diary.md", in: paths) == nil)
        #expect(resolve(.markdown("Plan%20B.md"), from: "Home/Diary.md", in: paths) == "Work/Plan B.md")
    }

    @Test func pathSuffixAtFolderBoundary() {
        let paths = ["A/Work/Plan.md", "A/Homework/Plan.md"]
        #expect(resolve(.wiki("Work/Plan"), from: "x.md", in: paths) == "A/Work/Plan.md")
        #expect(resolve(.wiki("A/Work/Plan"), from: "x.md", in: paths) == "A/Work/Plan.md")
        #expect(resolve(.wiki("ork/Plan"), from: "x.md", in: paths) == nil)
        #expect(resolve(.wiki("/A/Homework/Plan"), from: "x.md", in: paths) == "A/Homework/Plan.md")
        #expect(resolve(.wiki("/Work/Plan"), from: "x.md", in: paths) == "A/Work/Plan.md", "a leading / is removed, then rule 4")
        #expect(resolve(.wiki("B/Work/Plan"), from: "x.md", in: paths) == nil)
    }

    @Test func caseAndUnicodeEquivalence() {
        let composed = "Caf\u{E9}"
        let decomposed = "Cafe\u{301}"
        #expect(resolve(.wiki(decomposed), from: "x.md", in: ["Notes/\(composed).md"]) == "Notes/\(composed).md")
        #expect(resolve(.wiki(composed.uppercased()), from: "x.md", in: ["Notes/\(decomposed).md"]) == "Notes/\(decomposed).md")
        #expect(resolve(.wiki("notes/CAF\u{C9}"), from: "x.md", in: ["Notes/\(decomposed).md"]) == "Notes/\(decomposed).md")
        #expect(resolve(.markdown("./caf%C3%A9.MD"), from: "Notes/x.md", in: ["Notes/\(decomposed).md"]) == "Notes/\(decomposed).md")
        #expect(resolve(.markdown("../NOTES/Cafe%CC%81.md"), from: "Other/x.md", in: ["Notes/\(composed).md"]) == "Notes/\(composed).md")
    }

    @Test func backslashIsNoSeparator() {
        let paths = ["A/B.md", "A\\B.md"]
        #expect(resolve(.wiki("A\\B"), from: "x.md", in: paths) == "A\\B.md")
        #expect(resolve(.wiki("A/B"), from: "x.md", in: paths) == "A/B.md")
    }

    @Test func relativeTargets() {
        let paths = ["Work/Plan B.md", "Work/Sub/Deep.md", "Home/Diary.md", "Plan B.md", "img/pic one.png"]
        #expect(resolve(.markdown("../Work/Plan%20B.md"), from: "Home/Diary.md", in: paths) == "Work/Plan B.md")
        #expect(resolve(.markdown("./Sub/Deep.md"), from: "Work/Plan B.md", in: paths) == "Work/Sub/Deep.md")
        #expect(resolve(.markdown("./Sub/../Sub/./Deep"), from: "Work/Plan B.md", in: paths) == "Work/Sub/Deep.md", ".md may be left out")
        #expect(resolve(.wiki("./Plan B"), from: "Work/Sub/Deep.md", in: paths) == nil, "relative: exactly that path, no search")
        #expect(resolve(.wiki("../Plan B"), from: "Work/Sub/Deep.md", in: paths) == "Work/Plan B.md")
        #expect(resolve(.wiki("./Plan B"), from: "Diary.md", in: paths) == "Plan B.md")
        #expect(resolve(.markdown("../../Plan%20B.md"), from: "Work/Sub/Deep.md", in: paths) == "Plan B.md")
        #expect(resolve(.markdown("../pic%20one.png", embed: true), from: "img/x/n.md", in: paths) == "img/pic one.png")
        #expect(resolve(.markdown("../img/pic%20one.png", embed: true), from: "Home/Diary.md", in: paths) == "img/pic one.png")
    }

    @Test func dotDotAboveTheRootIsBroken() {
        let paths = ["Plan.md", "Work/Plan.md"]
        #expect(resolve(.markdown("../Plan.md"), from: "Diary.md", in: paths) == nil)
        #expect(resolve(.markdown("../../Plan.md"), from: "Work/Diary.md", in: paths) == nil)
        #expect(resolve(.markdown("./../Plan.md"), from: "Work/Diary.md", in: paths) == "Plan.md")
        #expect(resolve(.markdown("../Work/../../Plan.md"), from: "Work/Diary.md", in: paths) == nil)
    }

    @Test func headingOnlyIsTheNoteItself() {
        #expect(resolve(.wiki("", heading: "Heading"), from: "Work/Plan.md", in: []) == "Work/Plan.md")
        #expect(resolve(.markdown("", heading: "heading"), from: "Work/Plan.md", in: []) == "Work/Plan.md")
        #expect(resolve(.wiki("Plan", heading: "Heading"), from: "Work/Plan.md", in: ["Work/Plan.md"]) == "Work/Plan.md")
    }

    @Test func tiesPreferThePathFromTheRoot() {
        let paths = ["Plan.md", "Work/Plan.md", "A/Work/Plan.md"]
        #expect(resolve(.wiki("Plan"), from: "Work/Diary.md", in: paths) == "Plan.md", "from the root beats the note's folder")
        #expect(resolve(.wiki("Work/Plan"), from: "A/Diary.md", in: paths) == "Work/Plan.md")
    }

    @Test func tiesThenPreferTheNotesFolder() {
        let paths = ["Long folder/Plan.md", "Work/Plan.md", "Home/Sub/Plan.md"]
        #expect(resolve(.wiki("Plan"), from: "Home/Diary.md", in: paths) == "Work/Plan.md", "shortest")
        #expect(resolve(.wiki("Plan"), from: "Long folder/Diary.md", in: paths) == "Long folder/Plan.md")
        #expect(resolve(.wiki("Sub/Plan"), from: "Home/Diary.md", in: paths + ["X/Sub/Plan.md"]) == "Home/Sub/Plan.md")
        #expect(resolve(.markdown("Plan.md"), from: "Long folder/Diary.md", in: paths) == "Long folder/Plan.md")
    }

    @Test func tiesThenShortestThenByteOrder() {
        #expect(resolve(.wiki("Plan"), from: "x.md", in: ["Zz/Plan.md", "Aaa/Plan.md", "Bb/Plan.md"]) == "Bb/Plan.md")
        #expect(resolve(.wiki("Plan"), from: "x.md", in: ["Zz/Plan.md", "Bb/Plan.md"]) == "Bb/Plan.md")
        #expect(resolve(.wiki("Plan"), from: "x.md", in: ["Bb/Plan.md", "Zz/Plan.md"]) == "Bb/Plan.md", "independent of lookup order")
        #expect(resolve(.wiki("plan"), from: "x.md", in: ["plan.md", "Plan.md"]) == "Plan.md", "twins by case: byte order")
    }

    @Test func notesBeforeFilesWithoutExtension() {
        let paths = ["Plan", "Deep/Er/Plan.md", "v1.2.md", "img/pic.png", "Other/pic.png.md", "data.csv"]
        #expect(resolve(.wiki("Plan"), from: "x.md", in: paths) == "Deep/Er/Plan.md")
        #expect(resolve(.wiki("v1.2"), from: "x.md", in: paths) == "v1.2.md", "a dot in a title needs no .md")
        #expect(resolve(.wiki("pic.png"), from: "x.md", in: paths) == "Other/pic.png.md", "a note titled pic.png wins")
        #expect(resolve(.wiki("img/pic.png", embed: true), from: "x.md", in: paths) == "img/pic.png")
        #expect(resolve(.wiki("data.csv"), from: "x.md", in: paths) == "data.csv")
        #expect(resolve(.wiki("Plan.md"), from: "x.md", in: ["Plan", "Plan.md.md"]) == nil, "a .md target names that file only")
    }

    @Test func attachments() {
        let paths = ["img/pic.png", "Work/img/pic.png", "img/pic one.png"]
        #expect(resolve(.wiki("img/pic.png", embed: true), from: "Work/x.md", in: paths) == "img/pic.png")
        #expect(resolve(.wiki("pic.png", embed: true), from: "Work/img/x.md", in: paths) == "Work/img/pic.png")
        #expect(resolve(.wiki("pic", embed: true), from: "x.md", in: paths) == nil, "an attachment needs its extension")
        #expect(resolve(.markdown("../img/pic%20one.png", embed: true), from: "Work/x.md", in: paths) == "img/pic one.png")
    }

    @Test func titlesWithLinkCharacters() {
        // A markdown link can name them (decoded); the resolver only sees the decoded target.
        let paths = ["Q#A.md", "A|B.md", "x]]y.md"]
        #expect(resolve(.markdown("Q%23A.md"), from: "n.md", in: paths) == "Q#A.md")
        #expect(resolve(.markdown("A%7CB.md"), from: "n.md", in: paths) == "A|B.md")
        #expect(resolve(.markdown("x%5D%5Dy.md"), from: "n.md", in: paths) == "x]]y.md")
    }

    @Test func aLinkToItself() {
        #expect(resolve(.wiki("Diary"), from: "Home/Diary.md", in: ["Home/Diary.md"]) == "Home/Diary.md")
        #expect(resolve(.markdown("./Diary.md"), from: "Home/Diary.md", in: ["Home/Diary.md"]) == "Home/Diary.md")
    }

    @Test func emptyAndRootTargets() {
        #expect(resolve(.wiki("/"), from: "x.md", in: ["x.md"]) == nil)
        #expect(resolve(.markdown("./"), from: "x.md", in: ["x.md"]) == nil)
        #expect(resolve(.markdown(".."), from: "A/x.md", in: ["A/x.md"]) == nil)
    }
}
