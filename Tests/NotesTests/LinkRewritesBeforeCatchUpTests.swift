import Foundation
import Index
import Notes
import TestSupport
import Testing

@testable import RecordStore

/// A rename plans its link rewrites on the index as it stands when the commits the index has not
/// caught up with cannot change the plan (``NotesSearchIndex/linkRewrites(for:revising:)``): it
/// then writes nothing to the index in the request. The plan must be the one a caught-up index
/// gives, whatever was committed since.
@Suite struct LinkRewritesBeforeCatchUpTests {
    /// The token the index file holds, read without catching it up.
    static func indexToken(_ database: RecordDatabase) throws -> ChangeToken? {
        let index = try TextIndex(databasePath: database.path, create: false)
        defer { index.close() }
        return try index.token()
    }

    /// Saves a folder with a new modification date only (what every create or rename in it does).
    static func touch(_ folder: RecordID, in database: RecordDatabase, at seconds: Double) throws {
        guard case .success(var record)? = database.records(for: [folder])[folder] else { return }
        record.modificationDate = Date(timeIntervalSince1970: seconds)
        try database.modify(saving: [record])
    }

    /// What a plan rewrites, comparable.
    static func summary(_ rewrites: LinkRewrites) -> [String] {
        rewrites.notes.map {
            "\($0.record.recordID.recordName) \($0.path) \($0.count): \(Note.inlineText(Array(($0.record["text"]?.stringValue ?? "").utf8)) ?? "")"
        }
        .sorted() + rewrites.leftBroken.map { "broken \($0.path):\($0.line) \($0.target)" }.sorted()
    }

    /// The case of a mount's rename after other renames and edits (none of them about the moved
    /// note's name): planned without a catch-up, and right. Before, every plan caught the index up.
    @Test func aRenameAfterUnrelatedCommitsIsPlannedWithoutCatchingUp() async throws {
        let notes = try makeManager()
        let work = try await notes.newFolder(name: "Work")
        let plan = try await notes.save(note: Note(title: "Plan", text: "alpha", folder: work.recordID))
        _ = try await notes.save(note: Note(title: "Index", text: "see [[Plan]] and [x](Work/Plan.md)\n"))
        var other = try await notes.save(note: Note(title: "Other", text: "beta", folder: work.recordID))
        let index = NotesSearchIndex(database: notes.database)
        try index.catchUp()
        let caughtUp = try Self.indexToken(notes.database)
        other.title = "Renamed"
        other.text = "beta [[Elsewhere]]"
        _ = try await notes.save(other)
        _ = try await notes.save(note: Note(title: "Fresh", text: "gamma", folder: work.recordID))
        try Self.touch(work.recordID, in: notes.database, at: 1_000_000)

        let rewrites = try index.linkRewrites(for: .file(plan.recordID, folder: work.recordID, fileName: "Goal.md"))
        #expect(try Self.indexToken(notes.database) == caughtUp, "the plan caught the index up")
        #expect(rewrites.token == notes.database.currentToken)
        #expect(Self.summary(rewrites).count == 1)
        #expect(rewrites.notes.first?.record["text"]?.stringValue == "see [[Goal]] and [x](Work/Goal.md)\n")
    }

    /// A note edited and then renamed (its name and folder as the index has them, its text newer)
    /// is planned without a catch-up, its links read from the store: a link to itself that the
    /// index has not seen yet is rewritten, as are the notes that link to it. Before, the rename of
    /// a note edited since the index's token caught the index up in the request.
    @Test func aNoteEditedThenRenamedIsPlannedWithoutCatchingUp() async throws {
        let notes = try makeManager()
        let work = try await notes.newFolder(name: "Work")
        var plan = try await notes.save(note: Note(title: "Plan", text: "alpha", folder: work.recordID))
        _ = try await notes.save(note: Note(title: "Index", text: "see [[Plan]]\n"))
        let index = NotesSearchIndex(database: notes.database)
        try index.catchUp()
        let caughtUp = try Self.indexToken(notes.database)
        plan.text = "now [[Plan]] links to itself\n"
        plan = try await notes.save(plan)

        let rewrites = try index.linkRewrites(for: .file(plan.recordID, folder: work.recordID, fileName: "Goal.md"))
        #expect(try Self.indexToken(notes.database) == caughtUp, "the plan caught the index up")
        #expect(rewrites.token == notes.database.currentToken)
        #expect(Set(rewrites.notes.compactMap { $0.record["text"]?.stringValue }) == ["see [[Goal]]\n", "now [[Goal]] links to itself\n"])
        // Renamed since the index's token as well: its path is not the index's, so it is caught up first.
        plan.title = "Renamed"
        _ = try await notes.save(plan)
        _ = try index.linkRewrites(for: .file(plan.recordID, folder: work.recordID, fileName: "Goal.md"))
        #expect(try Self.indexToken(notes.database) == notes.database.currentToken)
    }

    /// A mount's rename saves a note's title without its text and says so
    /// (``NotesSearchIndex/textKept(of:from:to:)``): the next rename's plan, which finds that note
    /// committed after the index's token, takes its links from what the first plan knew and reads
    /// nothing of it. Its record file is damaged behind the store's back to show it: a plan that
    /// reads it refuses to plan on the index as it stands and catches the index up, as it does
    /// when the index was not told (`told` false). Before, every plan read the note renamed before it.
    @Test(arguments: [true, false]) func theNextRenamesPlanDoesNotReadTheNoteRenamedBefore(told: Bool) async throws {
        let notes = try makeManager()
        let work = try await notes.newFolder(name: "Work")
        // Over 256 bytes: kept in the record file only, not in the store's metadata.
        let text = "see [[Elsewhere]]\n" + String(repeating: "a line of words\n", count: 20)
        let first = try await notes.save(note: Note(title: "First", text: text, folder: work.recordID))
        let second = try await notes.save(note: Note(title: "Second", text: "beta", folder: work.recordID))
        let index = NotesSearchIndex(database: notes.database)
        try index.catchUp()
        #expect(notes.database.metadata(for: first.recordID)?.isPartial == true)
        let caughtUp = try Self.indexToken(notes.database)

        // The mount's rename of First: plan, save the title alone, say the text was kept.
        let rewrites = try index.linkRewrites(for: .file(first.recordID, folder: work.recordID, fileName: "Renamed.md"))
        #expect(rewrites.notes.isEmpty)
        let before = try #require(notes.database.metadata(for: first.recordID))
        var partial = before.record
        partial["title"] = .string("Renamed")
        let saved = try notes.database.modify(saving: [partial], unchangedSince: rewrites.token).savedRecords
        if told { index.textKept(of: first.recordID, from: before.recordChangeTag, to: saved.first?.recordChangeTag) }
        let file = notes.database.path + "/" + RecordFileName.relativePath(for: first.recordID.recordName)
        try Data("{".utf8).write(to: URL(fileURLWithPath: file))

        let next = try index.linkRewrites(for: .file(second.recordID, folder: work.recordID, fileName: "Next.md"))
        if told {
            #expect(try Self.indexToken(notes.database) == caughtUp, "the plan read the note renamed before and caught the index up")
        } else {
            #expect(try Self.indexToken(notes.database) != caughtUp, "the plan did not read the note renamed before")
        }
        #expect(next.token == notes.database.currentToken)
    }

    /// The index gives a note's link keys without its text (a rename's plan asks it for the moved
    /// note); a moved note it holds without links is not read, but one stored as bytes (whose
    /// links the index does not see) is still reported.
    @Test func theIndexGivesANotesLinkKeysAndANoteStoredAsBytesIsStillReported() async throws {
        let database = try RecordDatabase(path: makeTemporaryDirectory("notesfs-linkkeys"), backgroundThread: false)
        var asset = Note(title: "Big", text: "no links here\n").record
        asset[FieldName.content] = .asset(try database.makeAsset(Data("[[Plan]] in an asset\n".utf8)))
        let saved = try database.modify(saving: [
            Note(title: "Linking", text: "see [[Plan]], [x](Work/Goal.md) and [[#Heading]]\n").record,
            Note(title: "Plain", text: "no links\n").record, Note(title: "Empty", text: "").record, asset,
        ]).savedRecords
        let index = NotesSearchIndex(database: database)
        try index.catchUp()
        let file = try TextIndex(databasePath: database.path, create: false)
        defer { file.close() }
        let held = try saved.map { try file.linkKeys(ofDocument: $0.recordID.recordName) }
        #expect(held[0] == ["plan", "goal"])
        #expect(held[1] == [] && held[2] == [])
        #expect(try file.linkKeys(ofDocument: "no such record") == nil)
        let moved = try index.linkRewrites(for: .file(saved[3].recordID, folder: nil, fileName: "Bigger.md"))
        #expect(moved.leftBroken.map(\.path) == ["Bigger.md"])
        #expect(try index.linkRewrites(for: .file(saved[1].recordID, folder: nil, fileName: "Plainer.md")).leftBroken.isEmpty)
    }

    /// A note committed after the catch-up with a link to the moved note's name, or one that was
    /// indexed with such a link and edited since, is planned after a catch-up, and rewritten.
    @Test func commitsThatMayChangeThePlanAreCaughtUpFirst() async throws {
        let notes = try makeManager()
        let work = try await notes.newFolder(name: "Work")
        let plan = try await notes.save(note: Note(title: "Plan", text: "see [[Ref]]", folder: work.recordID))
        var linking = try await notes.save(note: Note(title: "Index", text: "see [[Plan]]\n"))
        let index = NotesSearchIndex(database: notes.database)
        let item = MovedItem.file(plan.recordID, folder: work.recordID, fileName: "Goal.md")

        try index.catchUp()
        let fresh = try await notes.save(note: Note(title: "Fresh", text: "also [[plan]]"))
        var rewrites = try index.linkRewrites(for: item)
        #expect(try Self.indexToken(notes.database) == notes.database.currentToken)
        #expect(Self.summary(rewrites).contains { $0.hasPrefix(fresh.recordID.recordName) && $0.hasSuffix("also [[Goal]]") })

        try index.catchUp()
        linking.text = "now [[Plan]] twice [[Plan]]\n"
        _ = try await notes.save(linking)
        rewrites = try index.linkRewrites(for: item)
        #expect(try Self.indexToken(notes.database) == notes.database.currentToken)
        #expect(rewrites.notes.contains { $0.record["text"]?.stringValue == "now [[Goal]] twice [[Goal]]\n" })

        // A file named as the moved note's own link arrives in a folder where that link would
        // resolve to it instead: planned after a catch-up too.
        try index.catchUp()
        _ = try await notes.save(note: Note(title: "Ref", text: "", folder: work.recordID))
        _ = try index.linkRewrites(for: item)
        #expect(try Self.indexToken(notes.database) == notes.database.currentToken)
    }

    /// A note created after the catch-up and renamed (rsync's temporary name, a new note renamed
    /// at once): planned without a catch-up, its own links to itself rewritten.
    @Test func aNoteCommittedAfterTheCatchUpIsPlannedFromTheStore() async throws {
        let notes = try makeManager()
        let work = try await notes.newFolder(name: "Work")
        _ = try await notes.save(note: Note(title: "Index", text: "unrelated", folder: work.recordID))
        let index = NotesSearchIndex(database: notes.database)
        try index.catchUp()
        let caughtUp = try Self.indexToken(notes.database)
        let draft = try await notes.save(note: Note(title: "Draft", text: "me: [[Draft]], [x](./Draft.md)", folder: work.recordID))
        let rewrites = try index.linkRewrites(for: .file(draft.recordID, folder: nil, fileName: "Final.md"))
        #expect(try Self.indexToken(notes.database) == caughtUp)
        #expect(rewrites.notes.map { $0.record["text"]?.stringValue } == ["me: [[Final]], [x](./Final.md)"])
        #expect(rewrites.notes.map(\.path) == ["Final.md"])
    }

    static let titles = ["Plan", "plan", "Goal", "Ref", "Ref (ab)", "Draft", "Note", "Untitled", "Plan (x)"]

    static func randomText(_ generator: inout SeededGenerator) -> String {
        var text = "text \(generator.next() % 100)"
        for _ in 0..<Int(generator.next() % 4) {
            let title = titles.randomElement(using: &generator) ?? "Plan"
            switch generator.next() % 5 {
            case 0: text += " [[\(title)]]"
            case 1: text += " [[Work/\(title)]]"
            case 2: text += " [x](./\(title.replacingOccurrences(of: " ", with: "%20")).md)"
            case 3: text += " [y](\(title.replacingOccurrences(of: " ", with: "%20")).md)"
            default: text += " [[../\(title)|z]]"
            }
        }
        return text
    }

    /// Random notes, links, renames, moves, edits, creations and deletions committed after a
    /// catch-up; then a random note's move planned before the catch-up and after it: the same plan.
    @Test(arguments: [1, 2, 3, 4, 5, 6] as [UInt64]) func aPlanMadeBeforeTheCatchUpEqualsOneMadeAfter(seed: UInt64) async throws {
        var generator = SeededGenerator(state: seed)
        let notes = try makeManager()
        let work = try await notes.newFolder(name: "Work")
        let home = try await notes.newFolder(name: "Home")
        let folders: [RecordID?] = [nil, work.recordID, home.recordID]
        var ids: [RecordID] = []
        // Record names from the seed too: they give namesakes their suffixes, so a run is repeated exactly.
        var made = 0
        func nextID() -> RecordID {
            made += 1
            return RecordID(recordName: "n\(seed)x\(made)")
        }
        for _ in 0..<24 {
            let note = Note(
                title: Self.titles.randomElement(using: &generator) ?? "", text: Self.randomText(&generator),
                folder: folders.randomElement(using: &generator) ?? nil, recordID: nextID())
            ids.append(try await notes.save(note: note).recordID)
        }
        let index = NotesSearchIndex(database: notes.database)
        var (skipped, caughtUp) = (0, 0)
        for _ in 0..<30 {
            try index.catchUp()
            for _ in 0..<Int(1 + generator.next() % 3) {
                guard let id = ids.randomElement(using: &generator) else { continue }
                var note = try await notes.fetch(Note.self, id: id)
                switch generator.next() % 7 {
                case 0: note.text = Self.randomText(&generator)
                case 1: note.title = Self.titles.randomElement(using: &generator) ?? ""
                case 2: note.folder = folders.randomElement(using: &generator) ?? nil
                case 3:
                    let new = Note(
                        title: Self.titles.randomElement(using: &generator) ?? "", text: Self.randomText(&generator),
                        folder: folders.randomElement(using: &generator) ?? nil, recordID: nextID())
                    ids.append(try await notes.save(note: new).recordID)
                    continue
                case 4 where ids.count > 8:
                    _ = try await notes.delete(note)
                    ids.removeAll { $0 == id }
                    continue
                case 5:
                    try Self.touch(home.recordID, in: notes.database, at: Double(generator.next() % 1_000_000))
                    continue
                default: note.setModificationDate(Date(timeIntervalSince1970: Double(generator.next() % 1_000_000)))
                }
                let oldTag = notes.database.metadata(for: id)?.recordChangeTag
                let textChanged = try await notes.fetch(Note.self, id: id).text != note.text
                let saved = try await notes.save(note)
                // What a mount's rename says after saving a note's title or folder alone.
                if !textChanged { index.textKept(of: id, from: oldTag, to: notes.database.metadata(for: saved.recordID)?.recordChangeTag) }
            }
            guard let moved = ids.randomElement(using: &generator) else { continue }
            let item = MovedItem.file(
                moved, folder: folders.randomElement(using: &generator) ?? nil,
                fileName: (Self.titles.randomElement(using: &generator) ?? "") + " \(generator.next() % 3).md")
            let before = try Self.indexToken(notes.database)
            let early = try index.linkRewrites(for: item)
            if try Self.indexToken(notes.database) == before {
                skipped += 1
                // Planned again, from what the first plan kept of the unindexed records.
                #expect(Self.summary(try index.linkRewrites(for: item)) == Self.summary(early))
            } else {
                caughtUp += 1
            }
            try index.catchUp()
            let late = try index.linkRewrites(for: item)
            #expect(Self.summary(early) == Self.summary(late), "seed \(seed)")
            #expect(early.token == late.token)
        }
        #expect(skipped > 0 && caughtUp > 0, "planned without a catch-up \(skipped) times, after one \(caughtUp) times")
    }
}
