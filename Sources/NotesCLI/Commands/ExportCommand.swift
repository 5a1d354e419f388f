import Foundation
import RecordStore

/// `notesfs export DIR [--from PATH]`.
enum ExportCommand {
    static let spec = CommandSpec(
        name: "export", synopsis: "export DIR [--from PATH]", summary: "export a markdown tree",
        help: """
            Writes folders as directories, notes as Title.md and attachments by name, named as the
            mount names them, and sets every mtime to the record's modification date. DIR is
            created if needed; files already there with the same names are replaced. A progress
            bar shows on a terminal.
              --from PATH   export only the contents of this folder (default: everything)
            """,
        options: [OptionSpec("--from", value: true)], run: run)

    static func run(_ context: CommandContext) throws(CLIError) {
        let target = try context.positionals(min: 1, max: 1)[0]
        let database = try context.openDatabase()
        let catalog = Catalog(database: database)
        let folder = try catalog.resolveFolder(context.arguments.value("--from") ?? "")
        try FileSystem.makeDirectories(target)
        let exporter = TreeExport(database: database, catalog: catalog)
        let items = try exporter.plan(folder?.recordID, into: target)
        var summary = TreeExport.Summary()
        let progress = ProgressBar(label: "export", total: items.count, enabled: FileSystem.stderrIsTerminal && !context.output.quiet)
        exporter.run(items, summary: &summary, progress: progress)
        progress.finish()
        for failure in summary.failures { context.output.error(failure) }
        if context.output.json {
            context.output.json(
                .object([
                    ("folders", .int(Int64(summary.folders))), ("notes", .int(Int64(summary.notes))),
                    ("attachments", .int(Int64(summary.attachments))), ("failed", .int(Int64(summary.failures.count))),
                    ("seconds", .double(progress.elapsed)),
                ]))
        } else {
            context.output.info(
                "exported \(Formatting.count(summary.notes, "note")), \(Formatting.count(summary.attachments, "attachment")), \(Formatting.count(summary.folders, "folder")) in "
                    + String(format: "%.2f", progress.elapsed) + " s")
        }
        if let first = summary.failures.first {
            throw CLIError(first.status, target, Formatting.count(summary.failures.count, "record") + " not exported")
        }
    }
}
