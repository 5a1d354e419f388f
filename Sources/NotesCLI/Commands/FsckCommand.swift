import Foundation
import Notes
import RecordStore
import Sync

/// `notesfs fsck [--repair]`: checks every file of the database.
enum FsckCommand {
    static let spec = CommandSpec(
        name: "fsck", synopsis: "fsck [--repair]", summary: "check the database (and repair it)",
        help: """
            Reads every record file (each at most 64 MiB), checks the index, references, folder
            cycles, assets, file modes and note history (versions whose fields or size are
            damaged), and prints each problem with the file or note it is about. Works on a database you may only read. Exits 0 when the database is clean, 4
            when problems remain. Notes whose front matter cannot be read in full are listed
            as notices ("notice: PATH: front matter not read: line N: …"): they keep their
            text, and a notice alone does not change the exit status.
              --repair   move damaged, oversized and foreign record files into <db>/lost+found/
                         (nothing is deleted) and drop their records from the index (a
                         database that syncs fetches them again at its next sync); copy
                         damaged versions there (as JSON) and delete them; put a
                         readable record file's record back in the index if it lacks it; set modes
                         to 0700/0600; break folder cycles (the first folder becomes top-level);
                         delete assets no record has used for 5 minutes; then check again
            """,
        options: [OptionSpec("--repair")], run: run)

    static func run(_ context: CommandContext) throws(CLIError) {
        _ = try context.positionals(min: 0, max: 0)
        let repair = context.arguments.has("--repair")
        let database = try context.openDatabase()
        let contents = FolderContents(database: database)
        let report: CheckReport
        // A record dropped for local damage is the server's still: fetched again, never deleted there.
        let hold: SyncStateHold?
        do { hold = repair ? try SyncStateHold(databasePath: database.path) : nil } catch { throw SyncCommand.cliError(error, context) }
        do { report = try database.check(repair: repair) } catch { throw CLIError.store(error, subject: database.path) }
        do { try hold?.refetch(report.droppedRecords.map(\.recordName)) } catch { throw SyncCommand.cliError(error, context) }
        // Paths of records are computed before a repair changed the index.
        let lines = report.problems.map { line(for: $0, contents: contents) }
        var remaining = report.problems
        // Not repaired: the mount shows such records as empty files.
        let damagedVersions = VersionRecordCheck.damaged(in: database)
        let nodeProblems = NodeRecordCheck.problems(in: database, contents: contents) + damagedVersions.map(\.problem)
        var movedVersions: [String] = []  // --repair: damaged versions, copied to lost+found and deleted
        // The derived full-text index: damage is a problem (--repair rebuilds it); being behind is not.
        var indexProblems = SearchIndexCheck.problems(database)
        // Not problems: the notes keep their text; their unread properties are missing from queries.
        let notices: [String]
        do { notices = try FrontMatterCheck.notices(in: database, contents: contents) } catch {
            throw CLIError.notes(error, subject: database.path)
        }
        if repair {
            movedVersions = try VersionRecordCheck.moveAside(damagedVersions.map(\.id), in: database)
            do { remaining = try database.check().problems } catch { throw CLIError.store(error, subject: database.path) }
            if !indexProblems.isEmpty {
                indexProblems = SearchIndexCheck.rebuild(database)
            }
            try context.finish(database)
        }
        // What is left: the store's problems after a repair, and the notes' and index's (not repaired).
        let left = remaining.count + nodeProblems.count - movedVersions.count + indexProblems.count
        if context.output.json {
            var members: [(String, JSONValue)] = [
                ("recordsChecked", .int(Int64(report.recordsChecked))),
                ("problems", .array(zip(report.problems, lines).map { json($0.0, line: $0.1) })),
                ("nodeRecordProblems", .array(nodeProblems.map(JSONValue.string))),
                ("searchIndexProblems", .array(indexProblems.map(JSONValue.string))),
                ("notices", .array(notices.map(JSONValue.string))),
            ]
            if repair {
                members.append(("movedAside", .array((report.movedAside + movedVersions).map(JSONValue.string))))
                members.append(("droppedRecords", .array(report.droppedRecords.map { .string($0.recordName) })))
                members.append(("repaired", .array(report.repaired.map(JSONValue.string))))
                members.append(("unrepaired", .array(report.unrepaired.map(JSONValue.string))))
                members.append(("remainingProblems", .int(Int64(left))))
            }
            context.output.json(.object(members))
        } else {
            var out = lines + nodeProblems + indexProblems
            out += (report.movedAside + movedVersions).map { "moved aside: \($0)" }
            out += report.droppedRecords.map { "dropped from the index: record \($0.recordName)" }
            out += report.repaired.map { "repaired: \($0)" }
            out += report.unrepaired.map { "not repaired: \($0)" }
            out += notices.map { "notice: \($0)" }
            context.output.lines(out)
            context.output.info(
                Formatting.count(report.recordsChecked, "record file") + " checked, "
                    + Formatting.count(report.problems.count + nodeProblems.count + indexProblems.count, "problem") + " found"
                    + (notices.isEmpty ? "" : ", " + Formatting.count(notices.count, "notice"))
                    + (repair ? ", \(left) remaining after repair" : ""))
        }
        if left > 0 {
            throw CLIError(
                .damaged, database.path,
                Formatting.count(left, "problem")
                    + (repair ? " remain" : " found; run 'notesfs fsck --repair'"))
        }
    }

    static func kind(_ problem: CheckProblem) -> String {
        switch problem {
        case .damagedRecordFile: "damagedRecordFile"
        case .missingRecordFile: "missingRecordFile"
        case .danglingReference: "danglingReference"
        case .missingAsset: "missingAsset"
        case .assetSizeMismatch: "assetSizeMismatch"
        case .orphanedAsset: "orphanedAsset"
        case .foreignFile: "foreignFile"
        case .unindexedRecordFile: "unindexedRecordFile"
        case .looseMode: "looseMode"
        case .referenceCycle: "referenceCycle"
        case .damagedJournalLine: "damagedJournalLine"
        case .damagedIndex: "damagedIndex"
        }
    }

    /// `<path>: <problem>`; a record's problem also names the note or folder it is.
    static func line(for problem: CheckProblem, contents: FolderContents) -> String {
        var record: RecordID?
        switch problem {
        case .missingRecordFile(let id, _), .missingAsset(let id, _, _), .unindexedRecordFile(let id, _),
            .assetSizeMismatch(let id, _, _, _, _):
            record = id
        case .danglingReference(let from, _, _): record = from
        case .referenceCycle(_, let members): record = members.first
        default: break
        }
        let notePath = record.flatMap { contents.entry(for: $0)?.displayPath }
        switch (problem.path, notePath) {
        case (let path?, let note?): return "\(path) (\(note)): \(problem.description)"
        case (let path?, nil): return "\(path): \(problem.description)"
        case (nil, let note?): return "\(note): \(problem.description)"
        case (nil, nil): return "record \(record?.recordName ?? "?"): \(problem.description)"
        }
    }

    static func json(_ problem: CheckProblem, line: String) -> JSONValue {
        var members: [(String, JSONValue)] = [("kind", .string(kind(problem)))]
        if let path = problem.path { members.append(("path", .string(path))) }
        members.append(("description", .string(problem.description)))
        members.append(("line", .string(line)))
        return .object(members)
    }
}
