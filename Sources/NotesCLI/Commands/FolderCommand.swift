import Foundation
import Notes
import RecordStore

/// `notesfs folder new|ls|rm`.
enum FolderCommand {
    static let specs: [CommandSpec] = [
        CommandSpec(
            name: "folder new", synopsis: "folder new NAME [--parent PATH]", summary: "create a folder",
            help: """
                NAME may be a path (Work/Projects): every folder but the last must exist.
                  --parent PATH   create it inside this folder (default: the root)
                """,
            options: [OptionSpec("--parent", value: true)], writes: true, run: new),
        CommandSpec(
            name: "folder ls", synopsis: "folder ls [PATH]", summary: "list the folders in a folder (default: the root)",
            help: "Prints each folder's path, ending in /.", run: list),
        CommandSpec(
            name: "folder rm", synopsis: "folder rm PATH [--dry-run]",
            summary: "delete a folder and everything in it, in one atomic step",
            help: """
                Prints each folder, note and attachment removed.
                  --dry-run   print what would be removed, remove nothing
                """,
            options: [OptionSpec("--dry-run", "-n")], writes: true, run: remove),
    ]

    static func new(_ context: CommandContext) throws(CLIError) {
        let name = try context.positionals(min: 1, max: 1)[0]
        let database = try context.openDatabase(create: true)
        let contents = FolderContents(database: database)
        let parentPath = context.arguments.value("--parent") ?? ""
        _ = try contents.folder(at: parentPath)
        let full = parentPath.isEmpty ? name : parentPath + "/" + name
        let (parent, fileName) = try contents.newEntry(at: full)
        let folderName = EntryNames.name(fromFileName: fileName)
        let shown = Array(EntryNames.baseName(folderName, kind: .folder).utf8)
        if let existing = contents.children(of: parent?.recordID).first(where: { Array($0.fileName.utf8) == shown }) {
            throw CLIError(.conflict, existing.displayPath, "already exists")
        }
        let folder = Folder(name: folderName, parent: parent?.recordID)
        let saved: Record
        do throws(RecordStoreError) {
            guard let first = try database.modify(saving: [folder.record]).savedRecords.first else {
                throw RecordStoreError.unknownItem(folder.recordID)
            }
            saved = first
        } catch {
            throw CLIError.store(error, subject: full)
        }
        try context.finish(database)
        contents.invalidate()
        if context.output.json, let entry = contents.entry(for: saved.recordID) {
            context.output.json(Formatting.json(entry))
        } else {
            context.output.detail("created folder \(contents.entry(for: saved.recordID)?.displayPath ?? full)")
        }
    }

    static func list(_ context: CommandContext) throws(CLIError) {
        let path = try context.positionals(min: 0, max: 1).first ?? ""
        let database = try context.openDatabase()
        let contents = FolderContents(database: database)
        let folder = try contents.folder(at: path)
        let folders = contents.children(of: folder?.recordID).filter { $0.kind == .folder }
        if context.output.json {
            context.output.json(.array(folders.map(Formatting.json)))
        } else {
            context.output.lines(folders.map { ShellQuoting.shown($0.path) + "/" })
        }
    }

    /// The entries under a folder, the folder first, then depth first (an explicit stack: no
    /// recursion, however deep the tree).
    static func subtree(of folder: FolderEntry, in contents: FolderContents) throws(CLIError) -> [FolderEntry] {
        var result: [FolderEntry] = []
        var pending = [folder]
        while let entry = pending.popLast() {
            result.append(entry)
            guard entry.kind == .folder else { continue }
            pending += contents.children(of: entry.recordID).reversed()
        }
        return result
    }

    static func remove(_ context: CommandContext) throws(CLIError) {
        let path = try context.positionals(min: 1, max: 1)[0]
        let dryRun = context.arguments.has("--dry-run")
        let database = try context.openDatabase()
        let contents = FolderContents(database: database)
        guard let folder = try contents.folder(at: path) else { throw CLIError(.usage, path, "the root cannot be removed") }
        try FolderContents.refuseVirtual(folder, path)
        let planned = try subtree(of: folder, in: contents)
        var removed = planned
        if !dryRun {
            let deleted: [RecordID]
            do { deleted = try database.modify(deleting: [folder.recordID]).deletedRecordIDs } catch {
                throw CLIError.store(error, subject: folder.displayPath)
            }
            try context.finish(database)
            let deletedSet = Set(deleted)
            removed = planned.filter { deletedSet.contains($0.recordID) }
            // Records added by another process since the listing: name them by record name.
            let known = Set(planned.map(\.recordID))
            for id in deleted where !known.contains(id) {
                context.output.detail("also removed record \(id.recordName), added meanwhile")
            }
        }
        if context.output.json {
            context.output.json(.object([("dryRun", .bool(dryRun)), ("removed", .array(removed.map(Formatting.json)))]))
        } else {
            context.output.lines(zip(removed, ShellQuoting.shownPaths(removed)).map { $0.1 + ($0.0.kind == .folder ? "/" : "") })
            let counts = [EntryNames.Kind.folder, .note, .attachment].map { kind in removed.filter { $0.kind == kind }.count }
            let summary = [
                Formatting.count(counts[0], "folder"), Formatting.count(counts[1], "note"), Formatting.count(counts[2], "attachment"),
            ]
            .joined(separator: ", ")
            context.output.info((dryRun ? "would remove " : "removed ") + summary)
        }
    }
}
