import Foundation
import Notes
import NotesFS
import RecordStore

/// Exports folders as directories, notes as `Title.md`, attachments by name (``EntryNames``), and
/// sets every file's and directory's mtime to the record's `modificationDate`.
struct TreeExport {
    /// A record to write and where.
    struct Item {
        var entry: Entry
        var path: String
    }

    struct Summary {
        var folders = 0
        var notes = 0
        var attachments = 0
        var failures: [CLIError] = []
    }

    let database: RecordDatabase
    let catalog: Catalog

    /// Lists what to write under `directory` for the contents of `folder` (nil: the root), pre-order.
    func plan(_ folder: RecordID?, into directory: String) throws(CLIError) -> [Item] {
        var items: [Item] = []
        func walk(_ folder: RecordID?, _ directory: String) throws(CLIError) {
            for entry in try catalog.children(of: folder) {
                let path = directory + "/" + entry.fileName
                items.append(Item(entry: entry, path: path))
                if entry.kind == .folder { try walk(entry.recordID, path) }
            }
        }
        try walk(folder, directory)
        return items
    }

    /// Writes the items; failures are collected, the rest goes on.
    func run(_ items: [Item], summary: inout Summary, progress: ProgressBar) {
        var directories: [Item] = []
        for item in items {
            do throws(CLIError) {
                try write(item)
                switch item.entry.kind {
                case .folder:
                    directories.append(item)
                    summary.folders += 1
                case .note: summary.notes += 1
                case .attachment: summary.attachments += 1
                }
            } catch {
                summary.failures.append(error)
            }
            progress.advance()
        }
        // Directories last, deepest first: writing into a directory changes its mtime.
        for item in directories.reversed() {
            guard let date = item.entry.modificationDate else { continue }
            do { try FileSystem.setModificationDate(date, of: item.path) } catch { summary.failures.append(error) }
        }
    }

    private func write(_ item: Item) throws(CLIError) {
        let entry = item.entry
        if entry.fileName.utf8.count > 255 {
            throw CLIError(.io, entry.displayPath, "file name is longer than 255 bytes; not exported")
        }
        switch entry.kind {
        case .folder:
            try FileSystem.makeDirectory(item.path)
            return
        case .note, .attachment:
            // The exact bytes: a note's text or content asset, an attachment's content, streamed.
            let record: Record
            do { record = try database.record(for: entry.recordID) } catch { throw CLIError.store(error, subject: entry.path) }
            try StoredBytes(of: record).write(toFile: item.path, database: database)
        }
        if let date = entry.modificationDate { try FileSystem.setModificationDate(date, of: item.path) }
    }
}
