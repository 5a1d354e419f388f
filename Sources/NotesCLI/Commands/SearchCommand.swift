import Foundation
import Index
import Notes
import RecordStore

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// `notesfs search QUERY [--folder PATH] [--limit N]` and `notesfs reindex`.
enum SearchCommand {
    static let spec = CommandSpec(
        name: "search", synopsis: "search QUERY [--folder PATH] [--tag TAG] [--limit N]",
        summary: "find notes by words in their title and text (full-text index), best first",
        help: """
            QUERY: words (all must occur), "a phrase", prefix*, AND, OR, NOT, parentheses;
            case and accents are folded (creme finds Crème); punctuation and emoji are not
            words (dropped); Chinese, Japanese and Korean match as substrings (東京 finds
            明日は東京に行きます). At most 4096 bytes, 64 terms, parentheses 16 deep; a QUERY
            that starts with '-' goes after '--'. Titles weigh more than text;
            attachments are found by name. Prints each hit's path, modification date and
            the text around the matches (bold on a terminal; **marked** otherwise).
              --folder PATH  only under this folder
              --tag TAG      only notes tagged TAG or a tag nested under it (TAG/…)
              --limit N      at most N hits (default: a screenful; 0: all)
            Exit status 1 when nothing matches. The index lives in <db>/indexes/ and is
            built on first use (`notesfs reindex` rebuilds it).
            """,
        options: [OptionSpec("--folder", "-f", value: true), OptionSpec("--tag", value: true), OptionSpec("--limit", "-n", value: true)],
        run: run)

    static let reindexSpec = CommandSpec(
        name: "reindex", synopsis: "reindex", summary: "rebuild the full-text index from the records",
        help: "Discards <db>/indexes/text.sqlite and builds it again (progress on a terminal).", writes: true, run: reindex)

    static func run(_ context: CommandContext) throws(CLIError) {
        let text = try context.positionals(min: 1, max: 1)[0]
        let query: SearchQuery
        do { query = try SearchQuery(text) } catch { throw CLIError(.usage, "search", error.description) }
        let limit = try context.arguments.integer("--limit", command: context.command).map { $0 == 0 ? nil : $0 } ?? screenful
        let folder = context.arguments.value("--folder").map { FolderContents.components($0).joined(separator: "/") }
        let tag = context.arguments.value("--tag").map { $0.hasPrefix("#") ? String($0.dropFirst()) : $0 }
        // With a tag, every hit first, then those tagged, up to the limit.
        let searchLimit = tag == nil ? limit : nil
        var hits = NotesSearchIndex.searchIfCurrent(query, folder: folder, limit: searchLimit, databasePath: context.databasePath)
        if hits == nil { hits = try fullSearch(query, folder: folder, limit: searchLimit, context) }
        var found = hits ?? []
        if let tag {
            let tagged = Set(
                try LinksCommand.answer(context) { (index) throws(SQLiteError) in try index.documents(tagged: tag, nested: true) }.map(
                    \.name))
            found = Array(found.filter { tagged.contains($0.name) }.prefix(limit ?? Int.max))
        }
        print(found, context)
        if found.isEmpty { throw CLIError(.notFound, nil, "") }
    }

    /// Opens the store, catches the index up (building it, with progress on a terminal), searches.
    static func fullSearch(_ query: SearchQuery, folder: String?, limit: Int?, _ context: CommandContext) throws(CLIError) -> [SearchHit] {
        let database = try context.openDatabase()
        if let folder, !folder.isEmpty { _ = try FolderContents(database: database).folder(at: folder) }
        let index = NotesSearchIndex(database: database)
        var bar: ProgressBar?
        let results: SearchResults
        do throws(SQLiteError) {
            results = try index.search(query, folder: folder, limit: limit) { done, total in
                if bar == nil, total > NotesSearchIndex.buildBatch {
                    bar = ProgressBar(label: "indexing", total: total, enabled: FileSystem.stderrIsTerminal && !context.output.quiet)
                }
                bar?.advance(by: done - (bar?.count ?? 0))
            }
        } catch { throw CLIError(.io, "search", error.description) }
        bar?.finish()
        if let reason = results.scannedBecause { context.output.info("search index not usable (\(reason)); read every note instead") }
        try context.finish(database)
        return results.hits
    }

    static func print(_ hits: [SearchHit], _ context: CommandContext) {
        if context.output.json {
            context.output.json(
                .array(
                    hits.map { hit in
                        .object([
                            ("path", .string(hit.path)), ("recordName", .string(hit.name)), ("recordType", .string(hit.recordType)),
                            ("modificationDate", hit.modificationDate.map { .string(Formatting.iso($0)) } ?? .null),
                            ("snippet", .string(snippet(hit, start: "", end: ""))),
                            ("marked", .string(snippet(hit, start: "**", end: "**"))),
                            ("rank", .double(hit.rank)),
                        ])
                    }))
            return
        }
        let bold = isatty(STDOUT_FILENO) == 1
        var lines: [String] = []
        for hit in hits {
            lines.append(ShellQuoting.shown(hit.path) + "  " + Formatting.short(hit.modificationDate))
            let text = bold ? snippet(hit, start: "\u{1B}[1m", end: "\u{1B}[0m") : snippet(hit, start: "**", end: "**")
            if !text.isEmpty { lines.append("    " + text) }
        }
        context.output.lines(lines)
    }

    /// The hit's snippet on one line, matches between `start` and `end`.
    static func snippet(_ hit: SearchHit, start: String, end: String) -> String {
        printable(hit.snippet, start: start, end: end)
    }

    /// A note's text on one line for a terminal: line ends and tabs as spaces, no control
    /// character (C0, DEL and C1: ESC and CSI sequences); a search's match marks as `start`/`end`.
    /// Scalar by scalar: a walk by `Character` finds grapheme boundaries, 4% of a search's samples.
    static func printable(_ text: String, start: String = "", end: String = "") -> String {
        let (matchStart, matchEnd) = (SearchHit.matchStart.unicodeScalars.first, SearchHit.matchEnd.unicodeScalars.first)
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar {
            case matchStart: out.append(contentsOf: start.unicodeScalars)
            case matchEnd: out.append(contentsOf: end.unicodeScalars)
            case "\n", "\r", "\t": out.append(" ")
            default: if scalar.value >= 0x20 && !(0x7F...0x9F).contains(scalar.value) { out.append(scalar) }
            }
        }
        return String(out).trimmingCharacters(in: .whitespaces)
    }

    /// Hits that fit the terminal (two lines each), or 20 when stdout is not one.
    static var screenful: Int {
        var size = winsize()
        guard isatty(STDOUT_FILENO) == 1, ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_row > 4 else { return 20 }
        return max(1, (Int(size.ws_row) - 2) / 2)
    }

    static func reindex(_ context: CommandContext) throws(CLIError) {
        _ = try context.positionals(min: 0, max: 0)
        let database = try context.openDatabase()
        TextIndex.discard(databasePath: database.path)
        let index = NotesSearchIndex(database: database)
        let bar = ProgressBar(
            label: "indexing", total: max(1, database.recordCount), enabled: FileSystem.stderrIsTerminal && !context.output.quiet)
        do throws(SQLiteError) {
            try index.catchUp { done, _ in bar.advance(by: done - bar.count) }
        } catch { throw CLIError(.io, TextIndex.path(forDatabaseAt: database.path), error.description) }
        bar.finish()
        context.output.info("indexed the notes and attachments of \(database.path)")
        try context.finish(database)
    }
}
