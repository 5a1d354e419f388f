import Foundation
import Glibc
import Notes
import RecordStore

/// `notesfs ls [PATH] [-l]`: a folder as the mount shows it.
enum ListCommand {
    static let spec = CommandSpec(
        name: "ls", synopsis: "ls [PATH] [-l]", summary: "list a folder as the mount shows it (default: the root)",
        help: """
            Folders end in /, notes show as Title.md, attachments by name.
              -l, --long   also the size in bytes and the modification date (UTC); a note kept
                           as bytes (not UTF-8 text, or over 8 MiB) shows "binary" after its size
            """,
        options: [OptionSpec("--long", "-l")], run: run)

    static func run(_ context: CommandContext) throws(CLIError) {
        let path = try context.positionals(min: 0, max: 1).first ?? ""
        let database = try context.openDatabase()
        let contents = FolderContents(database: database)
        let target = try contents.entry(at: path)
        let entries: [FolderEntry]
        if let target, target.kind != .folder { entries = [target] } else { entries = contents.children(of: target?.recordID) }
        if context.output.json {
            context.output.json(.array(entries.map(Formatting.json)))
            return
        }
        let single = target.map { $0.kind != .folder } ?? false
        // Names with a newline or other unprintable character are quoted (ShellQuoting).
        let names = entries.map { entry in
            single
                ? ShellQuoting.shown(entry.displayPath) : ShellQuoting.shown(entry.fileName) + (entry.kind == .folder ? "/" : "")
        }
        guard context.arguments.has("--long") else {
            context.output.lines(names)
            return
        }
        let sizes = entries.map { longSize($0, database) }
        let width = sizes.map(\.count).max() ?? 1
        context.output.lines(
            entries.indices.map { index in
                String(repeating: " ", count: width - sizes[index].count) + sizes[index] + "  "
                    + Formatting.short(entries[index].modificationDate) + "  "
                    + names[index] + symlinkSuffix(entries[index], database)
            })
    }

    /// The size column of `ls -l`: bytes (`binary` for a note kept as bytes), `fifo`, `socket`,
    /// `char MAJOR, MINOR`, `block MAJOR, MINOR`; a hard link shows its target's; `N links` after
    /// it when a record has several names.
    static func longSize(_ entry: FolderEntry, _ database: RecordDatabase) -> String {
        var record = entry.metadata
        if entry.kind == .link, let target = record?.record[FieldName.target]?.referenceValue?.recordID {
            record = database.metadata(for: target)
        }
        guard let record else { return "-" }
        var size: String
        if let special = try? SpecialFile(record: record.record) {
            switch special.fileType {
            case .character: size = "char \(special.major), \(special.minor)"
            case .block: size = "block \(special.major), \(special.minor)"
            case .fifo, nil: size = "fifo"
            case .socket: size = "socket"
            }
        } else {
            let shown = entry.kind == .link ? FolderEntry.size(of: record) : entry.size
            size = (shown.map(String.init) ?? "-") + (entry.isBinaryNote ? " binary" : "")
        }
        let links = database.referrers(to: record.recordID, key: FieldName.target).filter { $0.recordType == Link.recordType }.count
        if links > 0, entry.kind != .folder { size += " \(links + 1) links" }
        return size
    }

    /// ` -> target` for a symlink or a hard link to one (bytes that are not UTF-8 as U+FFFD).
    static func symlinkSuffix(_ entry: FolderEntry, _ database: RecordDatabase) -> String {
        var record = entry.metadata?.record
        if entry.kind == .link, let target = record?[FieldName.target]?.referenceValue?.recordID {
            record = database.metadata(for: target)?.record
        }
        guard let record, let symlink = try? Symlink(record: record) else { return "" }
        return " -> " + ShellQuoting.shown(String(decoding: symlink.target, as: UTF8.self))
    }
}
