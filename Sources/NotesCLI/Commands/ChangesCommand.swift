import Foundation
import Notes
import RecordStore

/// `notesfs changes [--since TOKEN]`: records changed and deleted, and the token to ask next time.
enum ChangesCommand {
    static let spec = CommandSpec(
        name: "changes", synopsis: "changes [--since TOKEN]", summary: "records changed and deleted since a token",
        help: """
            Prints one line per record: "changed<TAB>TYPE<TAB>RECORDNAME<TAB>PATH" or
            "deleted<TAB>RECORDNAME", then "token<TAB>TOKEN": pass it to --since next time.
            Without --since, every record is listed as changed. An expired token exits with 3.
              --since TOKEN   only changes after this token
            """,
        options: [OptionSpec("--since", value: true)], run: run)

    static func run(_ context: CommandContext) throws(CLIError) {
        _ = try context.positionals(min: 0, max: 0)
        var token: ChangeToken?
        if let text = context.arguments.value("--since") {
            guard let parsed = ChangeToken(stringValue: text) else {
                throw CLIError.usage("malformed token '\(text)'", command: context.command)
            }
            token = parsed
        }
        let database = try context.openDatabase()
        let changes: ChangeSet
        do { changes = try database.changes(since: token) } catch { throw CLIError.store(error, subject: "changes") }
        let contents = FolderContents(database: database)
        let changed = changes.changed.sorted { ($0.seq, $0.recordID) < ($1.seq, $1.recordID) }
        let paths = changed.map { contents.entry(for: $0.recordID)?.displayPath }
        if context.output.json {
            let records: [JSONValue] = zip(changed, paths).map { metadata, path in
                var members: [(String, JSONValue)] = [
                    ("recordName", .string(metadata.recordID.recordName)), ("recordType", .string(metadata.recordType)),
                ]
                if let path { members.append(("path", .string(path))) }
                if let tag = metadata.record.recordChangeTag { members.append(("recordChangeTag", .string(tag))) }
                if let date = metadata.record.modificationDate { members.append(("modificationDate", .string(Formatting.iso(date)))) }
                return .object(members)
            }
            context.output.json(
                .object([
                    ("changed", .array(records)), ("deleted", .array(changes.deleted.map { .string($0.recordName) })),
                    ("token", .string(changes.token.stringValue)),
                ]))
        } else {
            var lines = zip(changed, paths).map { metadata, path in
                "changed\t\(metadata.recordType)\t\(metadata.recordID.recordName)" + (path.map { "\t" + $0 } ?? "")
            }
            lines += changes.deleted.map { "deleted\t\($0.recordName)" }
            lines.append("token\t\(changes.token.stringValue)")
            context.output.lines(lines)
        }
    }
}
