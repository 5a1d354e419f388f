import Foundation
import Index
import Notes
import RecordStore

/// `notesfs tag rename OLD NEW`: renames a tag in every note that has it, in one commit
/// (``NotesSearchIndex/tagRename(from:to:)`` plans it).
enum TagCommand {
    static let specs: [CommandSpec] = [
        CommandSpec(
            name: "tag rename", synopsis: "tag rename OLD NEW [--dry-run]", summary: "rename a tag in every note that has it",
            help: """
                Rewrites #OLD to #NEW in the text and the front matter's tags: of every note,
                and the tags nested under it (#OLD/x becomes #NEW/x); OLD matches without
                case, #OLDER is another tag. Only the names change. One commit: all the
                notes change, or none. Renaming onto an existing tag merges the two.
                Notes stored as files rather than text are listed and left as they are.
                  --dry-run   print each tag that would change, change nothing
                Exit status 1 when no note has the tag.
                """,
            options: [OptionSpec("--dry-run", "-n")], writes: true, run: rename)
    ]

    static func rename(_ context: CommandContext) throws(CLIError) {
        let given = try context.positionals(min: 2, max: 2)
        let dryRun = context.arguments.has("--dry-run")
        do throws(TagRenameError) {
            _ = try TagRename.name(given[1])
            _ = try TagRename.name(given[0], existing: true)
        } catch { throw CLIError(.usage, nil, error.description) }  // before the store is opened
        let database = try context.openDatabase()
        let plan: TagRename
        do throws(TagRenameError) {
            plan = try NotesSearchIndex(database: database).tagRename(from: given[0], to: given[1])
        } catch {
            switch error {
            case .invalidName: throw CLIError(.usage, nil, error.description)
            case .index(let failure): throw CLIError(.io, nil, failure.description)  // it names the index
            }
        }
        for (path, reason) in plan.notRewritten {
            context.output.info("\(ShellQuoting.shown(path)): not rewritten: \(reason)")
        }
        let summary =
            "#\(plan.old) to #\(plan.new): \(plan.tagCount) \(plan.tagCount == 1 ? "tag" : "tags") in \(plan.notes.count) "
            + (plan.notes.count == 1 ? "note" : "notes")
        if dryRun {
            report(plan, dryRun: true, context)
            try context.finish(database)
        } else if !plan.notes.isEmpty {
            let now = Date()
            let records = plan.notes.map { rewrite in
                var record = rewrite.record
                record.modificationDate = now
                return record
            }
            // One commit: a failure (a full disk, a note changed since it was read) saves none.
            do { try database.modify(saving: records) } catch {
                var failure = CLIError.store(error, subject: "#" + plan.old)
                failure.message += "; no note was changed"
                throw failure
            }
            try context.finish(database)
            report(plan, dryRun: false, context)
        } else {
            try context.finish(database)
        }
        if plan.notes.isEmpty && plan.notRewritten.isEmpty { throw CLIError(.notFound, "#" + plan.old, "no note has this tag") }
        if !context.output.json { context.output.line((dryRun ? "would rename " : "renamed ") + summary) }
    }

    /// What changed (or would): `--json` one document, else one line per note (`--dry-run`: per tag).
    private static func report(_ plan: TagRename, dryRun: Bool, _ context: CommandContext) {
        if context.output.json {
            context.output.json(
                .object([
                    ("old", .string(plan.old)), ("new", .string(plan.new)), ("dryRun", .bool(dryRun)),
                    ("tags", .int(Int64(plan.tagCount))),
                    (
                        "notes",
                        .array(
                            plan.notes.map { note in
                                .object([("path", .string(note.path)), ("tags", .int(Int64(note.changes.count)))])
                            })
                    ),
                    (
                        "notRewritten",
                        .array(plan.notRewritten.map { .object([("path", .string($0.path)), ("reason", .string($0.reason))]) })
                    ),
                ]))
        } else if dryRun {
            context.output.lines(
                plan.notes.flatMap { note in
                    note.changes.map { "\(ShellQuoting.shown(note.path)):\($0.line): #\($0.old) -> #\($0.new)" }
                })
        } else {
            context.output.lines(plan.notes.map { "\(ShellQuoting.shown($0.path)): \($0.changes.count)" })
        }
    }
}
