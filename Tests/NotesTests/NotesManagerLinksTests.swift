import Foundation
import Notes
import RecordStore
import Testing

/// The seed's API for links, backlinks, tags, properties and property queries.
@Suite struct NotesManagerLinksTests {
    @Test func linksBacklinksTagsAndProperties() async throws {
        let notes = try makeManager()
        let work = try await notes.newFolder(name: "Work")
        let plan = try await notes.save(
            note: Note(title: "Plan", text: "---\nstatus: active\ntags: [project]\n---\n# Plan\n", folder: work.recordID))
        let index = try await notes.save(note: Note(title: "Index", text: "see [[Plan]] and [[Nowhere]] #Project\n"))
        let links = try await notes.links(of: index)
        #expect(links.map(\.link.target) == ["Plan", "Nowhere"])
        #expect(links.map(\.resolved) == ["Work/Plan.md", nil])
        let backlinks = try await notes.backlinks(of: plan)
        #expect(backlinks.map(\.sourcePath) == ["Index.md"])
        #expect(backlinks.map(\.lineText) == ["see [[Plan]] and [[Nowhere]] #Project"])
        #expect(try await notes.backlinks(of: index).isEmpty)
        #expect(try await notes.notes(tagged: "#project").map(\.title) == ["Index", "Plan"])
        #expect(try await notes.notes(tagged: "other").isEmpty)
        #expect(plan.properties.map(\.key) == ["status", "tags"])
        #expect(plan.properties.first?.value == .text("active"))
        #expect(index.properties.isEmpty)
        let active = try await notes.notes(where: try RecordStore.Predicate(format: #"status == "active""#))
        #expect(active.map(\.recordID) == [plan.recordID])
        let untagged = try await notes.notes(
            where: try RecordStore.Predicate(format: "tags == NIL"), sortedBy: [RecordStore.SortDescriptor(key: "title")])
        #expect(untagged.map(\.title) == ["Index"])
    }
}
