import Foundation
import Notes
import RecordStore

/// `notesfs query 'PREDICATE' [--type T] [--sort [-]KEY,...] [--limit N]`.
enum QueryCommand {
    static let spec = CommandSpec(
        name: "query", synopsis: "query PREDICATE [--type T] [--sort [-]KEY] [--limit N]",
        summary: "find records with the store's predicate language",
        help: """
            PREDICATE is NSPredicate-style: ==, !=, <, <=, >, >=, IN, BEGINSWITH, CONTAINS,
            AND, OR, NOT, [c], parentheses, TRUEPREDICATE, NOW; e.g. 'title BEGINSWITH[c] "plan"'.
            A key that is no field of a note (title, text, folder, modificationDate, …) is
            the note's front-matter property, any case: 'status == "active" AND due < now',
            'priority >= 2', '"x" IN tags', 'due > CAST("2026-12-01", "NSDate")'. A property
            compares only with values of its kind; a note without it matches no comparison.
            Prints each record's name and path (--json: the whole records).
              --type T       record type (default Note; also Folder, Attachment)
              --sort KEYS    comma-separated keys, - for descending (e.g. -modificationDate,
                             -priority); notes without a property sort last
              --limit N      at most N records
            """,
        options: [OptionSpec("--type", "-t", value: true), OptionSpec("--sort", "-s", value: true), OptionSpec("--limit", value: true)],
        run: run)

    static func run(_ context: CommandContext) throws(CLIError) {
        let format = try context.positionals(min: 1, max: 1)[0]
        let limit = try context.arguments.integer("--limit", command: context.command)
        let predicate = try parse(format)
        let sort = (context.arguments.value("--sort") ?? "").split(separator: ",").map { key in
            key.hasPrefix("-")
                ? SortDescriptor(key: String(key.dropFirst()), ascending: false) : SortDescriptor(key: String(key.drop { $0 == "+" }))
        }
        let database = try context.openDatabase()
        // `text CONTAINS` tests only the notes the full-text index names (and what changed since it).
        let index = NotesSearchIndex(database: database)
        database.setCandidateSource(index)
        defer { database.setCandidateSource(nil) }
        let query = Query(recordType: context.arguments.value("--type") ?? Note.recordType, predicate: predicate, sortDescriptors: sort)
        let contents = FolderContents(database: database)
        if !context.output.json && !NoteQuery.readsProperties(query) {
            // Names and paths only: the index's metadata answers, no record file is read for
            // the output (the predicate still reads what it needs).
            var found = database.queryMetadata(query)
            if let limit, found.count > limit { found.removeLast(found.count - max(0, limit)) }
            context.output.lines(
                found.map {
                    $0.recordID.recordName + "\t"
                        + (contents.entry(for: $0.recordID).map { ShellQuoting.shown($0.displayPath) } ?? $0.recordType)
                })
            return
        }
        let records: [Record]
        do { records = try NoteQuery.records(query, limit: limit, in: database, index: index) } catch {
            throw CLIError.notes(error, subject: "query")
        }
        let paths = records.map { contents.entry(for: $0.recordID)?.displayPath }
        if context.output.json {
            context.output.json(.array(zip(records, paths).map { Formatting.json($0.0, path: $0.1) }))
        } else {
            context.output.lines(
                zip(records, paths).map { $0.0.recordID.recordName + "\t" + ($0.1.map(ShellQuoting.shown) ?? $0.0.recordType) })
        }
    }

    /// Parses a predicate; a syntax error shows the predicate with a caret under the column.
    ///
    /// - Throws: a usage ``CLIError`` whose details are the predicate line and the caret line.
    static func parse(_ format: String) throws(CLIError) -> RecordStore.Predicate {
        do { return try RecordStore.Predicate(format: format) } catch {
            guard case .predicateSyntax(let message, let position) = error else { throw CLIError.store(error, subject: "query") }
            throw CLIError(
                .usage, "query", "syntax error at column \(position): \(message)", details: caret(under: format, column: position))
        }
    }

    /// The predicate indented by four spaces and a `^` under its `column` (1-based, in characters).
    static func caret(under format: String, column: Int) -> [String] {
        let line = format.replacingOccurrences(of: "\n", with: " ")
        let before = line.prefix(max(0, column - 1)).map { $0 == "\t" ? "\t" : " " }.joined()
        let padding = String(repeating: " ", count: max(0, column - 1 - line.count))
        return ["    " + line, "    " + before + padding + "^"]
    }
}
