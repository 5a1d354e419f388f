import Foundation
import Glibc
import Notes
import NotesFS
import RecordStore

/// Imports a markdown tree: directories become folders, `*.md` notes, other files attachments.
///
/// A note's bytes are its `text` when they are valid UTF-8 of at most 8 MiB, else its `content`
/// asset (Latin-1, UTF-16, binary, larger), losslessly; file contents are streamed into assets.
///
/// Each record's `modificationDate` is its file's mtime. Records are saved in batches (one atomic
/// modify per ``batchSize`` records, folders before their contents) and synced at the end.
struct TreeImport {
    /// A file or directory found under the source directory, in pre-order.
    struct Item {
        var path: String
        var name: String
        var status: FileSystem.Status
        /// Index of the containing directory's item; nil for the top level.
        var parent: Int?
    }

    struct Summary {
        var folders = 0
        var notes = 0
        var attachments = 0
        /// Symlinks, FIFOs, sockets, devices and hard links.
        var nodes = 0
        var skipped = 0
        var failures: [CLIError] = []
    }

    static let batchSize = 500

    let database: RecordDatabase
    let output: Output

    /// Lists the tree under `root` (pre-order). Entries whose names are not UTF-8 and entries that
    /// are neither regular files nor directories are reported and left out.
    func scan(_ root: String, summary: inout Summary) throws(CLIError) -> [Item] {
        var items: [Item] = []
        func walk(_ directory: String, parent: Int?) throws(CLIError) {
            var names: [String] = []
            for raw in try FileSystem.names(in: directory) {
                guard let name = String(validating: raw, as: UTF8.self) else {
                    let shown = String(decoding: raw, as: UTF8.self)
                    summary.failures.append(CLIError(.io, directory + "/" + shown, "file name is not UTF-8; not imported"))
                    continue
                }
                names.append(name)
            }
            names.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            for name in names {
                let path = directory + "/" + name
                guard let status = try FileSystem.status(path) else { continue }
                switch status.kind {
                case .other:
                    summary.skipped += 1
                    output.detail("\(path): not a regular file or directory; skipped")
                case .regular, .symlink, .special:
                    items.append(Item(path: path, name: name, status: status, parent: parent))
                case .directory:
                    items.append(Item(path: path, name: name, status: status, parent: parent))
                    try walk(path, parent: items.count - 1)
                }
            }
        }
        guard let status = try FileSystem.status(root) else { throw CLIError(.notFound, root, "no such directory") }
        guard status.kind == .directory else { throw CLIError(.usage, root, "not a directory") }
        try walk(root, parent: nil)
        return items
    }

    /// Imports `items` into `folder` (nil: the root); returns what it did.
    func run(_ items: [Item], into folder: RecordID?, summary: inout Summary, progress: ProgressBar) throws(CLIError) {
        var folderIDs: [Int: RecordID] = [:]
        var batch: [Record] = []
        var batchItems = 0
        func flush() throws(CLIError) {
            guard !batch.isEmpty else { return }
            do { try database.modify(saving: batch) } catch { throw CLIError.store(error, subject: database.path) }
            batch.removeAll(keepingCapacity: true)
            progress.advance(by: batchItems)
            batchItems = 0
        }
        // The record made for each (st_dev, st_ino) with more than one name: later names link to it.
        var linked: [[UInt64]: RecordID] = [:]
        for (index, item) in items.enumerated() {
            let parent = item.parent.map { folderIDs[$0] } ?? folder
            if item.parent != nil, parent == nil {
                // Inside a directory that could not be imported.
                batchItems += 1
                continue
            }
            let date = item.status.modificationDate
            var record: Record
            switch item.status.kind {
            case .regular where item.status.linkCount > 1 && linked[[item.status.device, item.status.inode]] != nil,
                .symlink where item.status.linkCount > 1 && linked[[item.status.device, item.status.inode]] != nil,
                .special where item.status.linkCount > 1 && linked[[item.status.device, item.status.inode]] != nil:
                let target = linked[[item.status.device, item.status.inode]] ?? RecordID()
                record = Link(name: EntryNames.name(fromFileName: item.name), target: target, folder: parent).record
                summary.nodes += 1
            case .symlink:
                let target: [UInt8]
                do { target = try FileSystem.symlinkTarget(item.path) } catch {
                    summary.failures.append(error)
                    batchItems += 1
                    continue
                }
                record = Symlink(name: EntryNames.name(fromFileName: item.name), target: target, folder: parent).record
                summary.nodes += 1
            case .special:
                let type: SpecialFile.FileType =
                    switch item.status.mode & S_IFMT {
                    case S_IFCHR: .character
                    case S_IFBLK: .block
                    case S_IFSOCK: .socket
                    default: .fifo
                    }
                var special = SpecialFile(
                    name: EntryNames.name(fromFileName: item.name), fileType: type, rdev: type == .character || type == .block ? item.status.rdev : 0,
                    folder: parent)
                special.ownership = Ownership(mode: UInt32(item.status.mode & 0o7777), uid: getuid(), gid: getgid())
                record = special.record
                summary.nodes += 1
            case .directory:
                record = Folder(name: EntryNames.name(fromFileName: item.name), parent: parent).record
                folderIDs[index] = record.recordID
                summary.folders += 1
            case .regular:
                let isNote = item.name.hasSuffix(EntryNames.noteExtension) && item.name != EntryNames.noteExtension
                if item.name == EntryNames.noteExtension { output.detail("\(item.path): no title; imported as an attachment") }
                let bytes: StoredBytes
                do { bytes = try StoredBytes.read(item.path, asNote: isNote, database: database) } catch {
                    summary.failures.append(error)
                    batchItems += 1
                    continue
                }
                switch (isNote, bytes) {
                case (true, _):
                    if case .asset = bytes { output.detail("\(item.path): not UTF-8 text of at most 8 MiB; imported as the note's bytes") }
                    record = Note(title: EntryNames.title(fromFileName: item.name), folder: parent).record
                    bytes.apply(to: &record)
                    summary.notes += 1
                case (false, .asset(let asset)):
                    record = Attachment(name: EntryNames.name(fromFileName: item.name), content: asset, folder: parent).record
                    summary.attachments += 1
                case (false, .text):
                    // StoredBytes.read returns text only for a note.
                    continue
                }
            case .other:
                continue
            }
            record.modificationDate = date
            if item.status.linkCount > 1, item.status.kind != .directory, linked[[item.status.device, item.status.inode]] == nil {
                linked[[item.status.device, item.status.inode]] = record.recordID
            }
            batch.append(record)
            batchItems += 1
            if batch.count >= Self.batchSize { try flush() }
        }
        try flush()
        do { try database.sync() } catch { throw CLIError.store(error, subject: database.path) }
    }
}
