import Foundation
import Notes
import RecordStore

/// `notesfs note log|diff|restore|undelete` and `notesfs log`: a note's kept versions
/// (``VersionHistory``). `note cat --at` is in ``NoteCommand``.
enum HistoryCommand {
    static let specs: [CommandSpec] = [
        CommandSpec(
            name: "note log", synopsis: "note log PATH [--json]", summary: "list a note's versions, newest first",
            help: """
                One line per version, the current state first: the version ID, the date it was
                written (UTC), its size in bytes, and what replaced it (edit, delete, merge,
                conflict, restore, rename). --json prints a list of objects with version (the full
                ID), id, date, size, kind and title.
                """, run: log),
        CommandSpec(
            name: "note diff", synopsis: "note diff PATH [V1 [V2]]", summary: "show changes between versions as a unified diff",
            help: """
                V1 and V2 are version IDs (or unique prefixes), dates (UTC: the version in effect
                then) or 'current'. With none: the previous version against the current text;
                with one: that version against the current text. Bytes that are not UTF-8 text
                are reported as differing, not printed.
                """, run: diff),
        CommandSpec(
            name: "note restore", synopsis: "note restore PATH --at DATE|VERSION", summary: "put an earlier version back",
            help: """
                The note takes that version's bytes and keeps its title and folder; the state it
                replaces is kept as a version (kind restore), so a restore can be undone.
                """,
            options: [OptionSpec("--at", value: true)], writes: true, run: restore),
        CommandSpec(
            name: "note undelete", synopsis: "note undelete PATH|VERSION [--into FOLDER]", summary: "bring a deleted note back",
            help: """
                The last version of the deleted note (or attachment) comes back with its record
                name, title, text, mode, owner and dates, in its folder; when that folder is gone
                too, at the folder path it had (folders made again where missing). PATH and
                VERSION are as 'log --deleted' prints them (a note's path without .md too; an ID
                or a unique prefix of at least 4 characters); the ID of an older version of a
                deleted note, as 'log' prints it, brings that version back.
                  --into FOLDER   put it in this existing folder instead (/ for the root)
                """, options: [OptionSpec("--into", value: true)], writes: true, run: undelete),
        CommandSpec(
            name: "log", synopsis: "log [--deleted] [--since DATE] [--json]", summary: "list kept versions of every note",
            help: """
                Newest first: the version ID, when it was made (UTC), its size, what made it and
                the note's path. --deleted lists only the notes deleted and not restored (their
                last version: 'note undelete' brings one back); --since DATE those made from DATE on.
                """,
            options: [OptionSpec("--deleted"), OptionSpec("--since", value: true)], run: logAll),
        CommandSpec(
            name: "history prune", synopsis: "history prune [--dry-run]", summary: "delete versions retention no longer keeps",
            help: """
                Always keeps every version of the last 7 days, the last 10 versions of each
                note, and the version before a delete, restore or merge for 90 days. Of the
                others, the newest of each day until 90 days, then of each week. For space, only
                when versions take more than NOTESFS_HISTORY_BUDGET percent (default 20) of the
                database's bytes and more than 64 MiB, the oldest of the others go first.
                NOTESFS_HISTORY_BUDGET=100 keeps every version that rule keeps. One atomic step.
                A mount does this in the background every hour.
                  -n, --dry-run   say what is kept and what would be deleted, delete nothing
                """,
            options: [OptionSpec("--dry-run", "-n")], writes: true, run: prune),
        CommandSpec(
            name: "history rm", synopsis: "history rm VERSION [VERSION...]", summary: "delete kept versions (a damaged one too)",
            help: """
                Deletes the versions named by ID (as 'note log', 'log' and fsck print them, or a
                unique prefix of at least 4 characters), readable or not, in one atomic step. A
                version kept as a delta of one deleted here is first made whole again.
                """, writes: true, run: remove),
    ]

    // MARK: history rm

    static func remove(_ context: CommandContext) throws(CLIError) {
        let selectors = try context.positionals(min: 1, max: Int.max)
        let database = try context.openDatabase()
        let names = database.metadata(ofType: Version.recordType).map(\.recordID.recordName)
        var deleting: [RecordID] = []
        for selector in selectors {
            let prefix = selector.lowercased()
            let matches =
                names.contains(selector) ? [selector] : prefix.count >= 4 ? names.filter { $0.lowercased().hasPrefix(prefix) } : []
            guard let match = matches.first else { throw CLIError(.notFound, selector, "no such version (see 'notesfs log')") }
            guard matches.count == 1 else { throw CLIError(.usage, selector, "version ID is ambiguous: give more characters") }
            let id = RecordID(recordName: match)
            if !deleting.contains(id) { deleting.append(id) }
        }
        do { try database.modify(deleting: deleting, reason: .prune) } catch { throw CLIError.store(error, subject: selectors[0]) }
        try context.finish(database)
        context.output.detail("deleted " + Formatting.count(deleting.count, "version"))
    }

    // MARK: history prune

    static func prune(_ context: CommandContext) throws(CLIError) {
        _ = try context.positionals(min: 0, max: 0)
        let database = try context.openDatabase()
        let settings = HistorySettings.fromEnvironment()
        let plan: PrunePlan
        if context.arguments.has("--dry-run") {
            plan = VersionRetention.plan(in: database, settings: settings)
        } else {
            do { plan = try VersionRetention.prune(in: database, settings: settings) } catch {
                throw CLIError.notes(error, subject: database.path)
            }
            try context.finish(database)
        }
        if context.output.json {
            context.output.json(
                .object([
                    ("deleted", .array(plan.deleting.map { .string($0.recordName) })),
                    ("versionBytesBefore", .int(plan.versionBytesBefore)),
                    ("versionBytesAfter", .int(plan.versionBytesAfter)), ("liveBytes", .int(plan.liveBytes)), ("budget", .int(plan.budget)),
                ]))
            return
        }
        if context.output.verbose { context.output.lines(plan.deleting.map(\.recordName)) }
        if context.arguments.has("--dry-run") { context.output.info(settings.summary) }
        context.output.info(
            (context.arguments.has("--dry-run") ? "would delete " : "deleted ") + Formatting.count(plan.deleting.count, "version")
                + ": versions take \(plan.versionBytesAfter) bytes of a budget of \(plan.budget)")
    }

    /// The live note or attachment at `path`.
    private static func noteEntry(_ path: String, contents: FolderContents) throws(CLIError) -> FolderEntry {
        guard let entry = try contents.entry(at: path) else { throw CLIError(.usage, path, "the root is not a note") }
        guard entry.kind == .note || entry.kind == .attachment else {
            throw CLIError(.notFound, entry.displayPath, "not a note or an attachment")
        }
        return entry
    }

    // MARK: note log

    static func log(_ context: CommandContext) throws(CLIError) {
        let path = try context.positionals(min: 1, max: 1)[0]
        let database = try context.openDatabase()
        let entry = try noteEntry(path, contents: FolderContents(database: database))
        let states = VersionSelector.states(of: entry, database: database).reversed()
        if context.output.json {
            context.output.json(
                .array(
                    states.map { state in
                        .object([
                            ("version", .string(state.fullID)), ("id", .string(state.id)), ("date", .string(Formatting.iso(state.date))),
                            ("size", .int(state.size)), ("kind", .string(state.kind)),
                            ("title", .string(state.version?.title ?? entry.name)),
                        ])
                    }))
            return
        }
        context.output.lines(
            states.map {
                "\($0.id.padding(toLength: 8, withPad: " ", startingAt: 0))  \(Formatting.short($0.date))  \($0.size)  \($0.kind)"
            })
    }

    // MARK: note diff

    static func diff(_ context: CommandContext) throws(CLIError) {
        let arguments = try context.positionals(min: 1, max: 3)
        let database = try context.openDatabase()
        let entry = try noteEntry(arguments[0], contents: FolderContents(database: database))
        let states = VersionSelector.states(of: entry, database: database)
        let old: NoteState
        let new: NoteState
        switch arguments.count {
        case 1:
            guard states.count >= 2 else { throw CLIError(.notFound, entry.path, "has no earlier version") }
            (old, new) = (states[states.count - 2], states[states.count - 1])
        case 2: (old, new) = (try VersionSelector.state(arguments[1], in: states, path: entry.path), states[states.count - 1])
        default:
            (old, new) = (
                try VersionSelector.state(arguments[1], in: states, path: entry.path),
                try VersionSelector.state(arguments[2], in: states, path: entry.path)
            )
        }
        let (a, b) = (
            try VersionSelector.bytes(of: old, entry: entry, database: database),
            try VersionSelector.bytes(of: new, entry: entry, database: database)
        )
        let labels = ("\(entry.path)@\(old.id)\t\(Formatting.iso(old.date))", "\(entry.path)@\(new.id)\t\(Formatting.iso(new.date))")
        switch (a, b) {
        case (.text(let x), .text(let y)):
            let text = LineDiff.unified(x, y, oldLabel: labels.0, newLabel: labels.1)
            if !text.isEmpty { context.output.raw(Data(text.utf8)) }
        default:
            if a != b { context.output.line("Binary versions \(entry.path)@\(old.id) and \(entry.path)@\(new.id) differ") }
        }
    }

    // MARK: note restore

    static func restore(_ context: CommandContext) throws(CLIError) {
        let path = try context.positionals(min: 1, max: 1)[0]
        guard let selector = context.arguments.value("--at") else {
            throw CLIError.usage("missing --at DATE|VERSION", command: context.command)
        }
        let database = try context.openDatabase()
        let entry = try noteEntry(path, contents: FolderContents(database: database))
        let state = try VersionSelector.state(selector, in: VersionSelector.states(of: entry, database: database), path: entry.path)
        guard let version = state.version else {
            context.output.info("\(entry.path): that is the current version; nothing to restore")
            return
        }
        do { try VersionHistory.restore(version, in: database) } catch { throw CLIError.notes(error, subject: entry.path) }
        try context.finish(database)
        context.output.detail("restored \(entry.path) to version \(version.shortID) of \(Formatting.iso(version.date))")
    }

    // MARK: note undelete

    static func undelete(_ context: CommandContext) throws(CLIError) {
        let argument = try context.positionals(min: 1, max: 1)[0]
        let database = try context.openDatabase()
        let contents = FolderContents(database: database)
        var into: RecordID?? = .none
        if let folder = context.arguments.value("--into") { into = .some(try contents.folder(at: folder)?.recordID) }
        let deleted = VersionHistory.deletedNotes(in: database)
        var found = DeletedNotePaths(deleted, contents: contents).note(at: argument).flatMap { name in
            deleted.first { $0.noteName == name }
        }
        let prefix = argument.lowercased()
        if found == nil, prefix.count >= 4 {
            let matches = deleted.filter { $0.recordID.recordName.hasPrefix(prefix) || $0.noteName.lowercased() == prefix }
            guard matches.count <= 1 else { throw CLIError(.usage, argument, "version ID is ambiguous: give more characters") }
            found = matches.first
        }
        if found == nil, prefix.count >= 4 { found = try olderVersion(prefix, argument: argument, deleted: deleted, database: database) }
        guard let version = found else {
            throw CLIError(.notFound, argument, "no deleted note there (see 'notesfs log --deleted')")
        }
        let record: Record
        do { record = try VersionHistory.restore(version, into: into, in: database) } catch {
            throw CLIError.notes(error, subject: argument)
        }
        try context.finish(database)
        contents.invalidate()
        context.output.info("restored \(contents.entry(for: record.recordID)?.path ?? version.title)")
    }

    /// Any version of a deleted note `log` prints (by ID or a prefix of 4 or more): that
    /// version, read whole, with the folder names of the note's delete (where it goes back).
    /// - Throws: when the prefix is ambiguous, the version unreadable, or its note not deleted.
    private static func olderVersion(_ prefix: String, argument: String, deleted: [Version], database: RecordDatabase)
        throws(CLIError) -> Version?
    {
        let matches = database.metadata(ofType: Version.recordType).filter { $0.recordID.recordName.lowercased().hasPrefix(prefix) }
        guard let match = matches.first else { return nil }
        guard matches.count == 1 else { throw CLIError(.usage, argument, "version ID is ambiguous: give more characters") }
        var record: Record
        do { record = try VersionHistory.fullVersion(match.recordID, in: database).record } catch {
            throw CLIError.notes(error, subject: argument)
        }
        let note = record[FieldName.note]?.stringValue ?? ""
        guard database.metadata(for: RecordID(recordName: note)) == nil else {
            throw CLIError(
                .conflict, argument, "is a version of a note that is not deleted: use 'notesfs note restore PATH --at \(argument)'")
        }
        if record["folderNames"] == nil, let names = deleted.first(where: { $0.noteName == note })?.record["folderNames"] {
            record["folderNames"] = names
        }
        do { return try Version(record: record) } catch { throw CLIError.notes(error, subject: argument) }
    }

    // MARK: log

    static func logAll(_ context: CommandContext) throws(CLIError) {
        _ = try context.positionals(min: 0, max: 0)
        var since: Date?
        if let text = context.arguments.value("--since") {
            guard let date = VersionSelector.date(text) else {
                throw CLIError.usage(
                    "--since needs a date such as 2026-12-03 or 2026-12-03T08:00:00Z (UTC), not '\(text)'", command: context.command)
            }
            since = date
        }
        let database = try context.openDatabase()
        let contents = FolderContents(database: database)
        var versions: [Version]
        if context.arguments.has("--deleted") {
            versions = VersionHistory.deletedNotes(in: database, since: since)
        } else {
            versions = database.metadata(ofType: Version.recordType).compactMap { try? Version(record: $0.record) }
            if let since { versions = versions.filter { $0.madeAt >= since } }
            versions.sort { ($0.madeAt, $0.recordID.recordName) > ($1.madeAt, $1.recordID.recordName) }
        }
        // The deleted notes' paths, unique, as `note undelete` takes them.
        let deletedPaths = DeletedNotePaths(VersionHistory.deletedNotes(in: database), contents: contents)
        func path(_ version: Version) -> String {
            if let entry = contents.entry(for: RecordID(recordName: version.noteName)) { return entry.path }
            return deletedPaths.path(ofNoteNamed: version.noteName) ?? DeletedNotePaths.basePath(version, contents: contents)
        }
        if context.output.json {
            context.output.json(
                .array(
                    versions.map { version in
                        .object([
                            ("version", .string(version.recordID.recordName)), ("id", .string(version.shortID)),
                            ("date", .string(Formatting.iso(version.madeAt))), ("written", .string(Formatting.iso(version.date))),
                            ("size", .int(version.size)), ("kind", .string(version.kindName)), ("note", .string(version.noteName)),
                            ("path", .string(path(version))),
                        ])
                    }))
            return
        }
        context.output.lines(
            versions.map { "\($0.shortID)  \(Formatting.short($0.madeAt))  \($0.size)  \($0.kindName)  \(ShellQuoting.shown(path($0)))" })
    }
}
