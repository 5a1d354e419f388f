import Foundation
import Notes
import RecordStore
import TestSupport
import Testing

@testable import Sync

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// The `notesfs sync` process is killed with SIGKILL at random (seeded) moments of a large push
/// and of large pulls, while the machines keep writing between the runs; after a final sync every
/// machine holds exactly the records written, each once, with every line written.
///
/// The pulls: B edits (a line appended at the end) and deletes the very notes it is pulling,
/// created on A, between the kills; in the last phase A also edits notes on the server between
/// them (a line put at the top), among them notes of the page a kill left applied and unrecorded,
/// so B's next run fetches versions newer than the ones its killed apply saved. What must hold
/// then: both sides edited such a note since their last agreed version, but never the same lines
/// (A's at the top, B's at the end, the note's own lines between), so the three-way merge is
/// clean: the note holds every line of both, A's above, B's below, and there is no conflict copy
/// at all. (A conflict copy is only for edits of the same lines since the last agreed version;
/// this test makes none.) B deletes only notes A does not edit in that phase, so every delete
/// stays a delete (an edit beats a delete).
@Suite(.tags(.postgres), .needsPostgres, .serialized) struct SyncKillTests {
    static let noteCount = 3000

    /// What the runs of one phase did.
    struct Phase {
        var kills = 0
        var finished = false
        /// Kills after which the marker named a page the saved state did not record (the crash
        /// window of ``AppliedPageMarker``).
        var unrecordedPages = 0
        /// Notes of such a page that the other machine edited before the next run: that run
        /// fetched a version newer than the one its killed apply saved.
        var superseded: Set<String> = []
    }

    /// What the test wrote: every note's text as it must end, by record name, and the notes it
    /// deleted.
    struct Written {
        var texts: [String: String] = [:]
        var deleted: Set<String> = []
    }

    /// How one machine writes between two runs.
    struct Writes {
        /// Its lines and the names of the notes it creates begin with this.
        var prefix: String
        /// Which notes it edits, and which it may delete.
        var edits: (Note) -> Bool
        var deletes: (Note) -> Bool
        /// Its line goes at the top of a note instead of the end.
        var atTop = false
        var creates = 3
    }

    /// Runs `notesfs sync` on `path` and kills it with SIGKILL after `delay` seconds unless it
    /// ended first; returns whether it was killed. A run that ends by itself must succeed.
    func killedSync(_ path: String, after delay: Double) throws -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: notesfsBinary)
        process.arguments = ["--db", path, "-q", "sync"]
        let errors = path + "-sync.stderr"
        _ = FileManager.default.createFile(atPath: errors, contents: nil)
        defer { try? FileManager.default.removeItem(atPath: errors) }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle(forWritingAtPath: errors)
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(delay)
        while process.isRunning, Date() < deadline { usleep(2_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            if process.terminationReason == .uncaughtSignal { return true }
        } else {
            process.waitUntilExit()
        }
        let text = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
        #expect(process.terminationStatus == 0, "notesfs sync failed: \(text)")
        return false
    }

    /// The record names of the page `machine`'s last killed run applied without its state
    /// recording it; empty when the kill came elsewhere.
    func unrecordedPage(_ machine: Machine) throws -> Set<String> {
        try machine.database.refresh()
        guard let record = try? machine.database.record(for: RecordID(recordName: AppliedPageMarker.recordName)),
            let marker = AppliedPageMarker(record), let state = try SyncState.load(databasePath: machine.path, includingRecords: false),
            marker.through > state.serverSeq
        else { return [] }
        return Set(marker.applied.keys)
    }

    /// Random writes to `machine` between two runs: a line added to up to 8 notes (those of
    /// `preferred` first), `writes.creates` notes created, one deleted.
    func write(
        _ machine: Machine, _ writes: Writes, round: Int, preferring preferred: Set<String> = [], _ written: inout Written,
        _ generator: inout SeededGenerator
    ) throws -> Set<String> {
        try machine.database.refresh()
        let notes = try machine.notes()
        let editable = notes.filter(writes.edits).shuffled(using: &generator)
        let picked = editable.filter { preferred.contains($0.recordID.recordName) }.prefix(4)
        var saves: [Record] = []
        for var note in picked + editable.filter({ !preferred.contains($0.recordID.recordName) }).prefix(8 - picked.count) {
            let line = "\(writes.prefix) round \(round)\n"
            let name = note.recordID.recordName
            note.text = writes.atTop ? line + note.text : note.text + line
            written.texts[name] = writes.atTop ? line + written.texts[name, default: ""] : written.texts[name, default: ""] + line
            saves.append(note.record)
        }
        let edited = Set(saves.map(\.recordID))
        let prefix = writes.prefix
        let created = (0..<writes.creates).map {
            note("\(prefix) R\(round) \($0)", id: "\(prefix)-r\(round)-\($0)", text: "new in round \(round)\n")
        }
        for record in created { written.texts[record.recordID.recordName] = try Note(record: record).text }
        try machine.save(saves + created)
        let doomed = notes.filter { writes.deletes($0) && !edited.contains($0.recordID) }
        if let doomed = doomed.randomElement(using: &generator) {
            try machine.database.modify(deleting: [doomed.recordID])
            written.texts[doomed.recordID.recordName] = nil
            written.deleted.insert(doomed.recordID.recordName)
        }
        return Set(edited.map(\.recordName))
    }

    /// Kills `notesfs sync` on `machine` at random moments (up to `rounds` kills), writing between
    /// runs, until a run ends by itself. `other`: another machine that writes too between the
    /// runs (notes of the page a kill left unrecorded first) and syncs to the end.
    func killRepeatedly(
        _ machine: Machine, rounds: Int, _ writes: Writes, other: (Machine, Writes)? = nil, _ written: inout Written,
        _ generator: inout SeededGenerator
    ) throws -> Phase {
        var phase = Phase()
        for round in 0..<rounds {
            if try killedSync(machine.path, after: Double.random(in: 0.02...0.45, using: &generator)) {
                phase.kills += 1
            } else {
                phase.finished = true
                break
            }
            let unrecorded = try unrecordedPage(machine)
            if !unrecorded.isEmpty { phase.unrecordedPages += 1 }
            if let (otherMachine, otherWrites) = other {
                let edited = try write(otherMachine, otherWrites, round: round, preferring: unrecorded, &written, &generator)
                phase.superseded.formUnion(edited.intersection(unrecorded))
                #expect(try killedSync(otherMachine.path, after: 600) == false)
            }
            _ = try write(machine, writes, round: round, preferring: unrecorded, &written, &generator)
        }
        return phase
    }

    /// Every local record's type and fields by name, read afresh (the sync ran in another process).
    func contents(_ machine: Machine) throws -> [String: String] {
        try machine.database.refresh()
        return try machine.contents()
    }

    /// The index of a note the test created first (`n<index>`), nil for another.
    static func index(_ note: Note) -> Int? {
        let name = note.recordID.recordName
        return name.hasPrefix("n") ? Int(name.dropFirst()) : nil
    }

    @Test(arguments: [UInt64(7)])
    func killedLargePushAndPullConverge(seed: UInt64) throws {
        var generator = SeededGenerator(state: seed)
        let (server, machines) = try makeMachines(2)
        let (a, b) = (machines[0], machines[1])
        let folders = [folder("Work", id: "work"), folder("Home", id: "home"), folder("Deep", id: "deep", parent: "work")]
        let notes = (0..<Self.noteCount).map { index in
            note(
                "N\(index)", id: "n\(index)", text: "note \(index) line 1\nnote \(index) line 2\n",
                folder: ["work", "home", "deep"][index % 3])
        }
        try a.save(folders + notes)
        var written = Written()
        for record in notes { written.texts[record.recordID.recordName] = try Note(record: record).text }

        // The large push: A keeps writing between the runs that are killed.
        let ownNotes: (String) -> (Note) -> Bool = { prefix in { $0.recordID.recordName.hasPrefix(prefix + "-") } }
        let push = try killRepeatedly(
            a, rounds: 20, Writes(prefix: "a", edits: { _ in true }, deletes: ownNotes("a")), &written, &generator)
        #expect(try killedSync(a.path, after: 600) == false)
        // The large pull: B edits and deletes any note between the runs, the ones it is pulling too.
        let pull = try killRepeatedly(
            b, rounds: 20, Writes(prefix: "b", edits: { _ in true }, deletes: { _ in true }), &written, &generator)
        #expect(try killedSync(b.path, after: 600) == false)
        #expect(try killedSync(a.path, after: 600) == false)
        for machine in [a, b] { try checkNotes(machine, written, seed: seed) }

        // A pull while A edits on the server: A puts a line at the top of every even note, then
        // of some between B's killed runs (notes of the page a kill left unrecorded first); B puts
        // lines at the end of any note (of that page first) and deletes odd notes and its own.
        try a.database.refresh()
        let even: (Note) -> Bool = { Self.index($0).map { $0 % 2 == 0 } ?? false }
        let top = "a before the last pull\n"
        let bulk = try a.notes().filter(even).map { note in
            var note = note
            note.text = top + note.text
            if let text = written.texts[note.recordID.recordName] { written.texts[note.recordID.recordName] = top + text }
            return note.record
        }
        try a.save(bulk)
        #expect(try killedSync(a.path, after: 600) == false)
        let both = try killRepeatedly(
            b, rounds: 8, Writes(prefix: "b2", edits: { _ in true }, deletes: { !even($0) }),
            other: (a, Writes(prefix: "a2", edits: even, deletes: { _ in false }, atTop: true, creates: 0)), &written, &generator)
        #expect(try killedSync(b.path, after: 600) == false)
        #expect(try killedSync(a.path, after: 600) == false)
        print(
            "seed \(seed): push killed \(push.kills) times (finished early: \(push.finished)), pull \(pull.kills) (\(pull.finished),"
                + " \(pull.unrecordedPages) unrecorded pages), pull beside edits on A \(both.kills) (\(both.finished),"
                + " \(both.unrecordedPages) unrecorded pages, \(both.superseded.count) of their notes edited on A)")
        #expect(push.kills > 0 && pull.kills > 0 && both.kills > 0, "seed \(seed): a phase had no run killed")

        let (local, remote) = (try contents(a), try contents(b))
        #expect(local.count == remote.count, "seed \(seed)")
        #expect(local == remote, "seed \(seed): \(Set(local.keys).symmetricDifference(remote.keys).sorted().prefix(20))")
        for machine in [a, b] {
            // No conflict copy, also of the notes A superseded after a kill left B's page
            // unrecorded (SyncCrashWindowTests has that window deterministic).
            try checkNotes(machine, written, seed: seed)
            #expect(try notesfs(machine.path, ["fsck"]).status == 0, "seed \(seed): fsck")
            let status = try notesfs(machine.path, ["sync", "status"])
            #expect(status.out.contains("pending changes: 0"), "seed \(seed): \(status.out)")
        }
        let rows = try serverRows(server)
        #expect(rows.filter { !$0.value.deleted }.count == local.count, "seed \(seed): live server rows")
        #expect(Set(rows.filter { !$0.value.deleted }.keys) == Set(local.keys), "seed \(seed)")
        let exports = try exportTrees([a, b])
        #expect(try differences(between: exports).isEmpty, "seed \(seed): the exports differ")
        for directory in exports { try? FileManager.default.removeItem(atPath: directory) }
    }

    /// The crash windows the kills above hit, made deterministic (``SavedSyncState``): B's pull
    /// applied A's note, then its state was put back as it was before.
    func crashedPull(of text: String) throws -> (a: Machine, b: Machine) {
        let (_, machines) = try makeMachines(2)
        try machines[0].save([note("Plan", id: "plan", text: text)])
        try machines[0].sync()
        let before = try SavedSyncState(machines[1])
        try machines[1].sync()
        try before.restore()
        return (machines[0], machines[1])
    }

    /// B deletes the note after the crash: it stays deleted on both machines (it came back).
    @Test func aDeleteAfterACrashedPullStays() throws {
        let (a, b) = try crashedPull(of: "one\n")
        try b.database.modify(deleting: [RecordID(recordName: "plan")])
        try syncAll([a, b])
        #expect(!a.has("plan") && !b.has("plan"))
        #expect(try a.contents() == b.contents())
    }

    /// A edits the note before B syncs again, so B fetches a newer version than the one its
    /// crashed apply saved: with B's own edit (at the other end) or none, the merge is clean.
    /// The marker's copy of the version applied (which the server no longer has) is recorded as
    /// B's base before the pull fetches again: without B's edit, B's note is that version and
    /// takes A's; with it, the two merge against it.
    @Test(arguments: [false, true]) func aNewerServerVersionAfterACrashedPullMergesClean(editedOnB: Bool) throws {
        let (a, b) = try crashedPull(of: "one\ntwo\n")
        var onA = try a.note("plan")
        onA.text = "top\n" + onA.text
        try a.save([onA.record])
        try a.sync()
        if editedOnB {
            var onB = try b.note("plan")
            onB.text += "end\n"
            try b.save([onB.record])
        }
        try syncAll([a, b])
        let expected = "top\none\ntwo\n" + (editedOnB ? "end\n" : "")
        for machine in [a, b] {
            // No line lost, whatever the copies.
            let notes = try machine.notes()
            let lines = Set(notes.flatMap { $0.text.split(separator: "\n") })
            #expect(expected.split(separator: "\n").allSatisfy(lines.contains))
            #expect(notes.map(\.text) == [expected])
        }
        #expect(try a.contents() == b.contents())
    }

    /// What `machine` must hold: every note written and not deleted, each once, with exactly its
    /// text as written (every line of both machines, in place); the deleted gone; no conflict
    /// copy (when there is one, what it and its note hold is printed, and a line written counts
    /// as lost only if neither holds it).
    func checkNotes(_ machine: Machine, _ written: Written, seed: UInt64) throws {
        try machine.database.refresh()
        let notes = try machine.notes()
        let titles = notes.map(\.title)
        #expect(Set(titles).count == titles.count, "seed \(seed): duplicate titles")
        let (copies, originals) = (notes.filter { $0.title.contains("(conflict ") }, notes.filter { !$0.title.contains("(conflict ") })
        let texts = Dictionary(uniqueKeysWithValues: originals.map { ($0.recordID.recordName, $0.text) })
        var copied: [String: String] = [:]
        let titled = Dictionary(originals.map { ($0.title, $0.recordID.recordName) }, uniquingKeysWith: { first, _ in first })
        for copy in copies {
            let title = String(copy.title[..<copy.title.range(of: " (conflict ")!.lowerBound])
            copied[titled[title] ?? title, default: ""] += copy.text
        }
        let unexpected = copied.keys.sorted()
        #expect(unexpected.isEmpty, "seed \(seed): \(unexpected.count) notes with a conflict copy: \(unexpected.prefix(10))")
        for name in unexpected.prefix(3) {
            print("seed \(seed): \(name) is \(texts[name].debugDescription), its copy \(copied[name].debugDescription)")
        }
        // Nor did its sync state record one.
        let stray = Set(try SyncState.load(databasePath: machine.path)?.conflicts.map(\.recordName) ?? []).sorted()
        #expect(stray.isEmpty, "seed \(seed): conflicts in the sync state of \(machine.path): \(stray.prefix(10))")
        let wrong = written.texts.filter { name, text in
            guard let copy = copied[name] else { return texts[name] != text }
            let held = Set((texts[name] ?? "").split(separator: "\n") + copy.split(separator: "\n"))
            return !text.split(separator: "\n").allSatisfy(held.contains)
        }.keys.sorted()
        #expect(wrong.isEmpty, "seed \(seed): \(wrong.count) notes lost or with another text: \(wrong.prefix(10))")
        for name in wrong.prefix(3) {
            print("seed \(seed): \(name) is \(texts[name].debugDescription), written \(written.texts[name].debugDescription)")
        }
        let extra = Set(texts.keys).subtracting(written.texts.keys).sorted()
        #expect(texts.count == written.texts.count, "seed \(seed): \(extra.count) notes not written: \(extra.prefix(10))")
        let back = written.deleted.filter { machine.has($0) }.sorted()
        #expect(back.isEmpty, "seed \(seed): \(back.count) deleted notes came back: \(back.prefix(10))")
    }
}
