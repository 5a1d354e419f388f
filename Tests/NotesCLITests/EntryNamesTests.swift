import Foundation
import Notes
import TestSupport
import Testing

@testable import NotesCLI

@Suite struct EntryNamesTests {
    typealias C = EntryNames.Candidate

    @Test func baseNames() {
        #expect(EntryNames.baseName("Plan", kind: .note) == "Plan.md")
        #expect(EntryNames.baseName("a/b", kind: .note) == "a\u{2215}b.md")
        #expect(EntryNames.baseName("", kind: .note) == "Untitled.md")
        #expect(EntryNames.baseName("", kind: .folder) == "Untitled")
        #expect(EntryNames.baseName("..", kind: .folder) == "\u{2025}")
        #expect(EntryNames.baseName("..", kind: .note) == "...md")
        #expect(EntryNames.baseName("photo.png", kind: .attachment) == "photo.png")
        #expect(EntryNames.title(fromFileName: "a\u{2215}b.md") == "a/b")
        #expect(EntryNames.title(fromFileName: ".hidden.md") == ".hidden")
    }

    @Test func earliestCreatedKeepsTheName() {
        let early = Date(timeIntervalSince1970: 100)
        let late = Date(timeIntervalSince1970: 200)
        let names = EntryNames.assign([
            C(recordName: "ZZZ-late-1", kind: .note, name: "Plan", creationDate: late),
            C(recordName: "AB-CD_ef-99", kind: .note, name: "Plan", creationDate: early),
            C(recordName: "Q1", kind: .folder, name: "Plan", creationDate: late),
            C(recordName: "X9-Y8", kind: .attachment, name: "Plan.md", creationDate: late),
        ])
        #expect(names == ["Plan (zzzlat).md", "Plan.md", "Plan", "Plan (x9y8).md"])
    }

    @Test func sameDateFallsBackToRecordNameAndSuffixGrowsWhenTaken() {
        let date = Date(timeIntervalSince1970: 100)
        let names = EntryNames.assign([
            C(recordName: "abcdef12", kind: .note, name: "N", creationDate: date),
            C(recordName: "abcdef11", kind: .note, name: "N", creationDate: date),
            C(recordName: "abcdef13", kind: .note, name: "N", creationDate: date),
        ])
        #expect(names == ["N (abcdef).md", "N.md", "N (abcdef13).md"])
    }

    /// Names equal after Unicode normalisation are one name (a map keyed by String, as the
    /// mount's, could reach only one of them): the later gets the suffix.
    @Test func namesEqualAfterNormalisationGetTheSuffix() {
        let names = EntryNames.assign([
            C(recordName: "a", kind: .note, name: "caf\u{E9}", creationDate: nil),
            C(recordName: "b", kind: .note, name: "cafe\u{301}", creationDate: nil),
        ])
        #expect(names[0].utf8.elementsEqual("caf\u{E9}.md".utf8))
        #expect(names[1].utf8.elementsEqual("cafe\u{301} (b).md".utf8))
    }
}
