import Foundation
import Notes
import RecordStore
import Sync
import Testing

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// The `notesfs sync` process is killed with SIGKILL at random (seeded) moments of a large push
/// and a large pull, while the machine keeps writing between the runs; after a final sync every
/// machine holds exactly the records written, each once, with the texts last written.
@Suite(.serialized) struct SyncKillTests {
    static let noteCount = 3000

    /// What the runs of one phase did.
    struct Phase {
        var kills = 0
        var finished = false
    }

    /// What the test wrote: every note's last text by record name, and the notes it deleted.
    struct Written {
        var texts: [String: String] = [:]
        var deleted: Set<String> = []
    }

    /// Runs `notesfs sync` on `path` and kills it with SIGKILL after `delay` seconds unless it
    /// ended first; returns whether it was killed. A run that ends by itself must succeed.
    func killedSync(_ path: String, after delay: Double) throws -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: notesfsBinary)
        process.arguments = ["--db", path, "-q", "sync"]
        let errors = path + "-sync.err"
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

    /// Random writes to `machine` between two runs: a line appended to a few notes, a few notes
    /// created, one deleted. Creates and deletes only the notes named `prefix…`, and edits only
    /// those unless `editsAll`.
    func writeBetweenRuns(
        _ machine: Machine, prefix: String, editsAll: Bool, round: Int, _ written: inout Written, _ generator: inout SeededGenerator
    ) throws {
        try machine.database.refresh()
        let notes = try machine.notes()
        var saves: [Record] = []
        let editable = editsAll ? notes : notes.filter { $0.recordID.recordName.hasPrefix(prefix + "-") }
        for var picked in editable.shuffled(using: &generator).prefix(8) {
            picked.text += "\(prefix) round \(round)\n"
            saves.append(picked.record)
        }
        let edited = Set(saves.map(\.recordID))
        saves += (0..<3).map { note("\(prefix) R\(round) \($0)", id: "\(prefix)-r\(round)-\($0)", text: "new in round \(round)\n") }
        try machine.save(saves)
        for record in saves { written.texts[record.recordID.recordName] = try Note(record: record).text }
        let created = notes.filter { $0.recordID.recordName.hasPrefix(prefix + "-") && !edited.contains($0.recordID) }
        if let doomed = created.randomElement(using: &generator) {
            try machine.database.modify(deleting: [doomed.recordID])
            written.texts[doomed.recordID.recordName] = nil
            written.deleted.insert(doomed.recordID.recordName)
        }
    }

    /// Kills `notesfs sync` on `machine` at random moments (up to `rounds` kills), writing between
    /// runs (``writeBetweenRuns(_:prefix:editsAll:round:_:_:)``), until a run ends by itself.
    func killRepeatedly(
        _ machine: Machine, rounds: Int, prefix: String, editsAll: Bool, _ written: inout Written, _ generator: inout SeededGenerator
    ) throws -> Phase {
        var phase = Phase()
        for round in 0..<rounds {
            if try killedSync(machine.path, after: Double.random(in: 0.02...0.45, using: &generator)) {
                phase.kills += 1
            } else {
                phase.finished = true
                break
            }
            try writeBetweenRuns(machine, prefix: prefix, editsAll: editsAll, round: round, &written, &generator)
        }
        return phase
    }

    /// Every local record's type and fields by name, read afresh (the sync ran in another process).
    func contents(_ machine: Machine) throws -> [String: String] {
        try machine.database.refresh()
        return try machine.contents()
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
        let push = try killRepeatedly(a, rounds: 20, prefix: "a", editsAll: true, &written, &generator)
        #expect(try killedSync(a.path, after: 600) == false)
        // The large pull, B writing notes of its own between the runs. (It leaves the pulled notes
        // alone: see SyncCrashWindowTests for an edit of a note whose pull a kill cut short.)
        let pull = try killRepeatedly(b, rounds: 20, prefix: "b", editsAll: false, &written, &generator)
        #expect(try killedSync(b.path, after: 600) == false)
        #expect(try killedSync(a.path, after: 600) == false)
        print("seed \(seed): push killed \(push.kills) times (finished early: \(push.finished)), pull \(pull.kills) (\(pull.finished))")
        #expect(push.kills > 0 && pull.kills > 0, "seed \(seed): no run was killed")

        let (local, remote) = (try contents(a), try contents(b))
        #expect(local.count == remote.count, "seed \(seed)")
        #expect(local == remote, "seed \(seed): \(Set(local.keys).symmetricDifference(remote.keys).sorted().prefix(20))")
        // No duplicate: no conflict copy, every note's title once, every record named as written.
        for machine in [a, b] {
            let titles = try machine.notes().map(\.title)
            #expect(Set(titles).count == titles.count, "seed \(seed): duplicate titles")
            #expect(!titles.contains { $0.contains("(conflict ") }, "seed \(seed): conflict copies")
            #expect(try SyncState.load(databasePath: machine.path)?.conflicts.isEmpty == true, "seed \(seed)")
            #expect(try notesfs(machine.path, ["fsck"]).status == 0, "seed \(seed): fsck")
            let status = try notesfs(machine.path, ["sync", "status"])
            #expect(status.out.contains("pending changes: 0"), "seed \(seed): \(status.out)")
        }
        // No loss: every note written and not deleted is there with its last text; the deleted are gone.
        for machine in [a, b] {
            let texts = Dictionary(uniqueKeysWithValues: try machine.notes().map { ($0.recordID.recordName, $0.text) })
            let wrong = written.texts.filter { texts[$0.key] != $0.value }.keys.sorted()
            #expect(wrong.isEmpty, "seed \(seed): \(wrong.count) notes lost or with another text: \(wrong.prefix(10))")
            #expect(
                texts.count == written.texts.count, "seed \(seed): \(Set(texts.keys).subtracting(written.texts.keys).sorted().prefix(10))")
            #expect(written.deleted.allSatisfy { !machine.has($0) }, "seed \(seed): a deleted note came back")
        }
        let rows = try serverRows(server)
        #expect(rows.filter { !$0.value.deleted }.count == local.count, "seed \(seed): live server rows")
        #expect(Set(rows.filter { !$0.value.deleted }.keys) == Set(local.keys), "seed \(seed)")
        let exports = try exportTrees([a, b])
        #expect(try differences(between: exports).isEmpty, "seed \(seed): the exports differ")
        for directory in exports { try? FileManager.default.removeItem(atPath: directory) }
    }
}
