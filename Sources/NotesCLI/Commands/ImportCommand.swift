import Foundation
import Notes
import RecordStore

/// `notesfs import DIR [--into PATH]`.
enum ImportCommand {
    static let spec = CommandSpec(
        name: "import", synopsis: "import DIR [--into PATH]", summary: "import a markdown tree",
        help: """
            Directories become folders, *.md files notes (title = file name without .md, text =
            the bytes, which must be UTF-8: other .md files become attachments), any other
            regular file an attachment. Each record's modification date is the file's mtime.
            Import adds records: it never merges into or replaces existing ones. Symbolic links
            are imported as symbolic links (never followed, so a link to a directory does not
            take the import out of DIR), FIFOs, sockets and devices as such, and further names of
            a hard-linked file as hard links. A progress bar shows on a terminal.
              --into PATH   import into this existing folder (default: the root)
            """,
        options: [OptionSpec("--into", value: true)], writes: true, run: run)

    static func run(_ context: CommandContext) throws(CLIError) {
        let source = try context.positionals(min: 1, max: 1)[0]
        let database = try context.openDatabase(create: true)
        let contents = FolderContents(database: database)
        let folder = try contents.folder(at: context.arguments.value("--into") ?? "")
        let importer = TreeImport(database: database, output: context.output)
        var summary = TreeImport.Summary()
        let items = try importer.scan(source, summary: &summary)
        let progress = ProgressBar(label: "import", total: items.count, enabled: FileSystem.stderrIsTerminal && !context.output.quiet)
        try importer.run(items, from: source, into: folder?.recordID, summary: &summary, progress: progress)
        progress.finish()
        try context.finish(database)
        for failure in summary.failures { context.output.error(failure) }
        if context.output.json {
            context.output.json(
                .object([
                    ("folders", .int(Int64(summary.folders))), ("notes", .int(Int64(summary.notes))),
                    ("attachments", .int(Int64(summary.attachments))), ("skipped", .int(Int64(summary.skipped))),
                    ("failed", .int(Int64(summary.failures.count))), ("seconds", .double(progress.elapsed)),
                ]))
        } else {
            context.output.info(
                "imported \(Formatting.count(summary.notes, "note")), \(Formatting.count(summary.attachments, "attachment")), \(Formatting.count(summary.folders, "folder")) in "
                    + String(format: "%.2f", progress.elapsed) + " s" + (summary.skipped > 0 ? " (\(summary.skipped) skipped)" : ""))
        }
        if let first = summary.failures.first {
            throw CLIError(first.status, source, Formatting.count(summary.failures.count, "file") + " not imported")
        }
    }
}
