import Foundation

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
        let catalog = Catalog(database: database)
        let target = try catalog.resolve(path)
        let entries: [Entry]
        if let target, target.kind != .folder { entries = [target] } else { entries = try catalog.children(of: target?.recordID) }
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
        let sizes = entries.map { ($0.size.map(String.init) ?? "-") + ($0.isBinaryNote ? " binary" : "") }
        let width = sizes.map(\.count).max() ?? 1
        context.output.lines(
            entries.indices.map { index in
                String(repeating: " ", count: width - sizes[index].count) + sizes[index] + "  " + Formatting.short(entries[index].modificationDate) + "  "
                    + names[index]
            })
    }
}
