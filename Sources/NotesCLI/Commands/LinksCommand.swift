import Foundation
import Index
import Notes
import RecordStore

/// `notesfs links NOTE`, `notesfs links --broken`, `notesfs backlinks NOTE`, `notesfs tags`:
/// answered by the index (``NotesSearchIndex``'s link and tag tables), without opening the store
/// when the index is current, else after catching it up.
enum LinksCommand {
    static let linksSpec = CommandSpec(
        name: "links", synopsis: "links [NOTE] [--broken]",
        summary: "a note's links with what each resolves to, or every broken link",
        help: """
            NOTE: a path as the mount shows it (`Work/Plan.md`; `.md` may be left out).
            Prints each link's line, the link as written and the path it resolves to, or
            "broken". Links are resolved as Obsidian resolves them (docs/links.md).
              --broken   every link of every note that resolves to nothing
            Exit status 1 when there is no link to print.
            """,
        options: [OptionSpec("--broken", "-b")], run: links)

    static let backlinksSpec = CommandSpec(
        name: "backlinks", synopsis: "backlinks NOTE",
        summary: "the notes that link to a note or an attachment, with the line of each link",
        help: """
            NOTE: a path as the mount shows it (`Work/Plan.md`, `img/pic.png`; a note's `.md`
            may be left out). Exit status 1 when nothing links to it.
            """,
        run: backlinks)

    static let tagsSpec = CommandSpec(
        name: "tags", synopsis: "tags [TAG]",
        summary: "every tag with the number of notes that have it, or the notes tagged TAG",
        help: """
            Tags are `#tag` and `#nested/tag` in a note's text (not in code, headings or
            URLs) and the entries of `tags:` in its front matter; they compare without case.
            With TAG: the notes tagged TAG or a tag nested under it (TAG/…).
            """,
        run: tags)

    static func links(_ context: CommandContext) throws(CLIError) {
        let broken = context.arguments.has("--broken")
        let given = try context.positionals(min: broken ? 0 : 1, max: broken ? 0 : 1)
        if broken {
            let found = try answer(context) { (index) throws(SQLiteError) in try NotesSearchIndex.brokenLinks(in: index) }
            if context.output.json {
                context.output.json(
                    .array(
                        found.map {
                            .object([("path", .string($0.sourcePath)), ("line", .int(Int64($0.line))), ("target", .string($0.target))])
                        }))
            } else {
                context.output.lines(found.map { "\(ShellQuoting.shown($0.sourcePath)):\($0.line): \($0.target)" })
            }
            if found.isEmpty { throw CLIError(.notFound, nil, "") }
            return
        }
        let path = try notePath(given[0], context)
        guard let found = try answer(context, { (index) throws(SQLiteError) in try NotesSearchIndex.links(ofNoteAt: path, in: index) })
        else { throw CLIError(.notFound, given[0], "no such note") }
        if context.output.json {
            context.output.json(
                .array(
                    found.map { item in
                        .object([
                            ("line", .int(Int64(item.link.line))), ("target", .string(item.link.target)),
                            ("heading", item.link.heading.map(JSONValue.string) ?? .null),
                            ("style", .string(item.link.style == .wiki ? "wiki" : "markdown")), ("embed", .bool(item.link.isEmbed)),
                            ("resolved", item.resolved.map(JSONValue.string) ?? .null),
                        ])
                    }))
        } else {
            context.output.lines(
                found.map { item in
                    let heading = item.link.heading.map { "#" + $0 } ?? ""
                    return "\(item.link.line): \(item.link.target)\(heading) -> \(item.resolved.map(ShellQuoting.shown) ?? "broken")"
                })
        }
        if found.isEmpty { throw CLIError(.notFound, nil, "") }
    }

    static func backlinks(_ context: CommandContext) throws(CLIError) {
        let given = try context.positionals(min: 1, max: 1)
        let path = try notePath(given[0], context)
        let found = try answer(context) { (index) throws(SQLiteError) in try NotesSearchIndex.backlinks(of: path, in: index) }
        if context.output.json {
            context.output.json(
                .array(
                    found.map {
                        .object([
                            ("path", .string($0.sourcePath)), ("line", .int(Int64($0.line))), ("target", .string($0.target)),
                            ("text", .string($0.lineText)),
                        ])
                    }))
        } else {
            context.output.lines(found.map { "\(ShellQuoting.shown($0.sourcePath)):\($0.line): \(SearchCommand.printable($0.lineText))" })
        }
        if found.isEmpty { throw CLIError(.notFound, nil, "") }
    }

    static func tags(_ context: CommandContext) throws(CLIError) {
        let given = try context.positionals(min: 0, max: 1)
        if let tag = given.first {
            let name = tag.hasPrefix("#") ? String(tag.dropFirst()) : tag
            let found = try answer(context) { (index) throws(SQLiteError) in try index.documents(tagged: name, nested: true) }
            if context.output.json {
                context.output.json(.array(found.map { .object([("path", .string($0.path)), ("recordName", .string($0.name))]) }))
            } else {
                context.output.lines(found.map { ShellQuoting.shown($0.path) })
            }
            if found.isEmpty { throw CLIError(.notFound, nil, "") }
            return
        }
        let found = try answer(context) { (index) throws(SQLiteError) in try index.tagCounts() }
        if context.output.json {
            context.output.json(.array(found.map { .object([("tag", .string($0.tag)), ("count", .int(Int64($0.count)))]) }))
        } else {
            context.output.lines(found.map { "#\(SearchCommand.printable($0.tag))  \($0.count)" })
        }
        if found.isEmpty { throw CLIError(.notFound, nil, "") }
    }

    /// The path as the index names files: components joined by `/`; a path without `.md` that
    /// names no file but names a note with it gets it.
    static func notePath(_ given: String, _ context: CommandContext) throws(CLIError) -> String {
        let path = FolderContents.components(given).joined(separator: "/")
        guard !path.isEmpty else { throw CLIError(.usage, given, "a note's path is needed") }
        if path.hasSuffix(EntryNames.noteExtension) { return path }
        let withExtension = path + EntryNames.noteExtension
        let known = try answer(context) { (index) throws(SQLiteError) -> Bool in
            guard try index.document(atPath: path) == nil else { return false }
            return try index.document(atPath: withExtension) != nil
        }
        return known ? withExtension : path
    }

    /// `body`'s answer from the index: without opening the store when the index is current, else
    /// after opening it and catching the index up (building it, with progress on a terminal).
    static func answer<T>(_ context: CommandContext, _ body: (TextIndex) throws(SQLiteError) -> T) throws(CLIError) -> T {
        if let answer = NotesSearchIndex.readIfCurrent(databasePath: context.databasePath, body) { return answer }
        let database = try context.openDatabase()
        let index = NotesSearchIndex(database: database)
        var bar: ProgressBar?
        let result: T
        do throws(SQLiteError) {
            try index.catchUp { done, total in
                if bar == nil, total > NotesSearchIndex.buildBatch {
                    bar = ProgressBar(label: "indexing", total: total, enabled: FileSystem.stderrIsTerminal && !context.output.quiet)
                }
                bar?.advance(by: done - (bar?.count ?? 0))
            }
            bar?.finish()
            result = try index.readCurrent(body)
        } catch { throw CLIError(.io, TextIndex.path(forDatabaseAt: database.path), error.description) }
        try context.finish(database)
        return result
    }
}
