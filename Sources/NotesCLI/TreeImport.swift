import Foundation
import Glibc
import Notes
import RecordStore

/// Imports a markdown tree: directories become folders, `*.md` notes, other files attachments.
///
/// A note's bytes are its `text` when they are valid UTF-8 of at most 8 MiB, else its `content`
/// asset (Latin-1, UTF-16, binary, larger), losslessly; file contents are streamed into assets.
///
/// Each record's `modificationDate` is its file's mtime. Records are saved in batches (one atomic
/// modify per ``batchSize`` records or ``batchBytes`` of JSON, folders before their contents) and
/// synced at the end.
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
    /// The JSON bytes one batch holds at most (``RecordStore/Record/jsonSizeBound``; a record
    /// over it alone): well under the 128 MiB one commit's journal line may hold.
    static let batchBytes = 32 << 20

    let database: RecordDatabase
    let output: Output

    /// Lists the tree under `root` (pre-order), with an explicit stack and directory descriptors
    /// (``DirectoryChain``): no recursion however deep the tree, and no symbolic link inside it is
    /// followed (a symlink is listed as one). Entries whose names are not UTF-8, directories that
    /// cannot be opened, and entries that are neither regular files, directories, symlinks nor
    /// special files are reported and left out.
    func scan(_ root: String, summary: inout Summary) throws(CLIError) -> [Item] {
        guard let status = try FileSystem.status(root) else { throw CLIError(.notFound, root, "no such directory") }
        guard status.kind == .directory else { throw CLIError(.usage, root, "not a directory") }
        let chain = try DirectoryChain(opening: root)
        var items: [Item] = []
        // The names of each directory being listed, and the next one to look at.
        var frames: [(names: [String], next: Int)] = [(try names(in: chain, summary: &summary), 0)]
        while let top = frames.indices.last {
            guard frames[top].next < frames[top].names.count else {
                frames.removeLast()
                if !frames.isEmpty { try chain.leave() }
                continue
            }
            let name = frames[top].names[frames[top].next]
            frames[top].next += 1
            // The directory's path and the name: one copy, not a join of every level.
            let path = (chain.currentTag.map { items[$0].path } ?? root) + "/" + name
            guard let status = try FileSystem.status(name, in: chain.current, path: path) else { continue }
            switch status.kind {
            case .other:
                summary.skipped += 1
                output.detail("\(path): not a regular file or directory; skipped")
            case .regular, .symlink, .special:
                items.append(Item(path: path, name: name, status: status, parent: chain.currentTag))
            case .directory:
                let parent = chain.currentTag
                let listing: [String]
                do throws(CLIError) {
                    try chain.enter(name, tag: items.count, expected: status.identity)
                    do throws(CLIError) { listing = try names(in: chain, summary: &summary) } catch {
                        try chain.leave()
                        throw error
                    }
                } catch {
                    summary.failures.append(error)
                    continue
                }
                items.append(Item(path: path, name: name, status: status, parent: parent))
                frames.append((listing, 0))
            }
        }
        return items
    }

    /// The UTF-8 names in the deepest directory of `chain`, in byte order; others are reported.
    private func names(in chain: DirectoryChain, summary: inout Summary) throws(CLIError) -> [String] {
        var names: [String] = []
        for raw in try FileSystem.names(in: chain.current, path: chain.path()) {
            guard let name = String(validating: raw, as: UTF8.self) else {
                let shown = String(decoding: raw, as: UTF8.self)
                summary.failures.append(CLIError(.io, chain.path(shown), "file name is not UTF-8; not imported"))
                continue
            }
            names.append(name)
        }
        return names.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    /// Imports `items`, scanned under `root`, into `folder` (nil: the root); returns what it did.
    func run(_ items: [Item], from root: String, into folder: RecordID?, summary: inout Summary, progress: ProgressBar) throws(CLIError) {
        var folderIDs: [Int: RecordID] = [:]
        var batch: [Record] = []
        var batchItems = 0
        var batchBytes = 0
        func flush() throws(CLIError) {
            guard !batch.isEmpty else { return }
            do { try database.modify(saving: batch) } catch { throw CLIError.store(error, subject: database.path) }
            batch.removeAll(keepingCapacity: true)
            batchBytes = 0
            progress.advance(by: batchItems)
            batchItems = 0
        }
        // The record made for each (st_dev, st_ino) with more than one name: later names link to it.
        var linked: [[UInt64]: RecordID] = [:]
        // Files are opened under their directory's descriptor, checked to be what the scan saw.
        let chain = try DirectoryChain(opening: root)
        for (index, item) in items.enumerated() {
            let parent = item.parent.map { folderIDs[$0] } ?? folder
            if item.parent != nil, parent == nil {
                // Inside a directory that could not be imported.
                batchItems += 1
                continue
            }
            do throws(CLIError) {
                try chain.leave(until: item.parent)
                if item.status.kind == .directory { try chain.enter(item.name, tag: index, expected: item.status.identity) }
            } catch {
                summary.failures.append(error)
                batchItems += 1
                continue
            }
            let date = item.status.modificationDate
            var record: Record
            var attributes = ExtendedAttributes()  // a regular file's or a directory's user. attributes
            switch item.status.kind {
            case .regular where item.status.linkCount > 1 && linked[[item.status.device, item.status.inode]] != nil,
                .symlink where item.status.linkCount > 1 && linked[[item.status.device, item.status.inode]] != nil,
                .special where item.status.linkCount > 1 && linked[[item.status.device, item.status.inode]] != nil:
                let target = linked[[item.status.device, item.status.inode]] ?? RecordID()
                record = Link(name: EntryNames.name(fromFileName: item.name), target: target, folder: parent).record
                summary.nodes += 1
            case .symlink:
                let target: [UInt8]
                do { target = try FileSystem.symlinkTarget(item.name, in: chain.current, path: item.path) } catch {
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
                    name: EntryNames.name(fromFileName: item.name), fileType: type,
                    rdev: type == .character || type == .block ? item.status.rdev : 0,
                    folder: parent)
                special.ownership = Ownership(mode: UInt32(item.status.mode & 0o7777), uid: getuid(), gid: getgid())
                record = special.record
                summary.nodes += 1
            case .directory:
                record = Folder(name: EntryNames.name(fromFileName: item.name), parent: parent).record
                folderIDs[index] = record.recordID
                do { attributes = try FileSystem.userAttributes(of: chain.current, path: item.path) } catch {
                    summary.failures.append(error)
                }
                summary.folders += 1
            case .regular:
                let isNote = item.name.hasSuffix(EntryNames.noteExtension) && item.name != EntryNames.noteExtension
                if item.name == EntryNames.noteExtension { output.detail("\(item.path): no title; imported as an attachment") }
                let bytes: StoredBytes
                do throws(CLIError) {
                    let fd = try FileSystem.openForReading(item.name, in: chain.current, path: item.path, expected: item.status.identity)
                    defer { close(fd) }
                    bytes = try StoredBytes.read(fd, path: item.path, asNote: isNote, database: database)
                    attributes = try FileSystem.userAttributes(of: fd, path: item.path)
                } catch {
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
            attributes.write(into: &record)
            if item.status.linkCount > 1, item.status.kind != .directory, linked[[item.status.device, item.status.inode]] == nil {
                linked[[item.status.device, item.status.inode]] = record.recordID
            }
            let bytes = record.jsonSizeBound
            if batchBytes + bytes > Self.batchBytes { try flush() }
            batch.append(record)
            batchBytes += bytes
            batchItems += 1
            if batch.count >= Self.batchSize { try flush() }
        }
        try flush()
        do { try database.sync() } catch { throw CLIError.store(error, subject: database.path) }
    }
}
