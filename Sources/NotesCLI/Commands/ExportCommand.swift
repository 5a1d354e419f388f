import Foundation
import Notes
import RecordStore

/// `notesfs export DIR [--from PATH] [--devices]`.
enum ExportCommand {
    static let spec = CommandSpec(
        name: "export", synopsis: "export DIR [--from PATH] [--devices]", summary: "export a markdown tree",
        help: """
            Writes folders as directories, notes as Title.md and attachments by name, named as the
            mount names them, symbolic links, FIFOs and sockets as such, and sets every mtime to
            the record's modification date. DIR is created if needed; regular files already there
            with the same names are replaced by new files. Nothing inside DIR is followed: a
            symbolic link (or anything else) in the way of a file or folder is reported and left
            as it is. A progress bar shows on a terminal.
              --from PATH   export only the contents of this folder (default: everything)
              --devices     also make block and character devices (needs root); without it
                            they are skipped and counted
            """,
        options: [OptionSpec("--from", value: true), OptionSpec("--devices")], run: run)

    static func run(_ context: CommandContext) throws(CLIError) {
        let target = try context.positionals(min: 1, max: 1)[0]
        let database = try context.openDatabase()
        let contents = FolderContents(database: database)
        let folder = try contents.folder(at: context.arguments.value("--from") ?? "")
        let exporter = TreeExport(database: database, contents: contents, devices: context.arguments.has("--devices"))
        let items = try exporter.plan(folder?.recordID)
        var summary = TreeExport.Summary()
        let progress = ProgressBar(label: "export", total: items.count, enabled: FileSystem.stderrIsTerminal && !context.output.quiet)
        try exporter.run(items, into: target, summary: &summary, progress: progress)
        progress.finish()
        for failure in summary.failures { context.output.error(failure) }
        if context.output.json {
            context.output.json(
                .object([
                    ("folders", .int(Int64(summary.folders))), ("notes", .int(Int64(summary.notes))),
                    ("attachments", .int(Int64(summary.attachments))), ("devicesSkipped", .int(Int64(summary.devicesSkipped))),
                    ("failed", .int(Int64(summary.failures.count))),
                    ("seconds", .double(progress.elapsed)),
                ]))
        } else {
            context.output.info(
                "exported \(Formatting.count(summary.notes, "note")), \(Formatting.count(summary.attachments, "attachment")), \(Formatting.count(summary.folders, "folder")) in "
                    + String(format: "%.2f", progress.elapsed) + " s"
                    + (summary.devicesSkipped > 0 ? " (\(Formatting.count(summary.devicesSkipped, "device")) skipped: use --devices)" : "")
                    + (summary.attributesNotKept > 0
                        ? " (the target keeps no user attributes: \(Formatting.count(summary.attributesNotKept, "file"))' left out)" : ""))
        }
        if let first = summary.failures.first {
            throw CLIError(first.status, target, Formatting.count(summary.failures.count, "record") + " not exported")
        }
    }
}
