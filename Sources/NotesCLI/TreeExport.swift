import Foundation
import Glibc
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
        /// Symlinks, FIFOs, sockets, devices and hard links.
        var nodes = 0
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
        // Hard links last, to the path their target was written at.
        let paths = Dictionary(items.map { ($0.entry.recordID, $0.path) }, uniquingKeysWith: { first, _ in first })
        for item in items.filter({ $0.entry.kind != .link }) + items.filter({ $0.entry.kind == .link }) {
            do throws(CLIError) {
                try write(item, paths: paths)
                switch item.entry.kind {
                case .folder:
                    directories.append(item)
                    summary.folders += 1
                case .note: summary.notes += 1
                case .attachment: summary.attachments += 1
                case .symlink, .special, .link: summary.nodes += 1
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

    private func write(_ item: Item, paths: [RecordID: String]) throws(CLIError) {
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
        case .symlink:
            guard Glibc.symlink(entry.symlinkTarget.map { CChar(bitPattern: $0) } + [0], item.path) == 0 else {
                throw CLIError.system("symlink", item.path, errno: errno)
            }
        case .special:
            // mkfifo for FIFOs; sockets and devices with mknod (devices need root).
            let special = entry.metadata.flatMap { try? SpecialFile(record: $0.record) }
            let type: mode_t =
                switch special?.fileType {
                case .fifo, nil: S_IFIFO
                case .socket: S_IFSOCK
                case .character: S_IFCHR
                case .block: S_IFBLK
                }
            let permissions = mode_t(truncatingIfNeeded: entry.metadata?.record["mode"]?.int64Value ?? 0o644) & 0o7777
            guard mknod(item.path, type | permissions, dev_t(special?.rdev ?? 0)) == 0 else {
                throw CLIError.system("mknod", item.path, errno: errno)
            }
        case .link:
            guard let target = entry.metadata?.record["target"]?.referenceValue?.recordID, let path = paths[target] else {
                throw CLIError(.io, entry.displayPath, "hard link to a record that is not exported; not exported")
            }
            guard Glibc.link(path, item.path) == 0 else { throw CLIError.system("link", item.path, errno: errno) }
            return
        }
        if let date = entry.modificationDate { try FileSystem.setModificationDate(date, of: item.path) }
    }
}
