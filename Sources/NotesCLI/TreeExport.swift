import Foundation
import Glibc
import Notes
import RecordStore

/// Exports folders as directories, notes as `Title.md`, attachments by name (``EntryNames``), and
/// sets every file's and directory's mtime to the record's `modificationDate`.
///
/// Everything is written under descriptors of the target's directories (``DirectoryChain``): no
/// path is resolved again and nothing already in the target is followed or written through. A
/// symbolic link, or anything but a directory where a folder goes, or anything but a regular file
/// where a note goes, is reported as in the way; a regular file is replaced by a new one.
struct TreeExport {
    /// A record to write, and the folder item it goes in.
    struct Item {
        var entry: FolderEntry
        /// The index of the folder's item; nil: directly in the target.
        var parent: Int?
    }

    struct Summary {
        var folders = 0
        var notes = 0
        var attachments = 0
        /// Symlinks, FIFOs, sockets, devices and hard links.
        var nodes = 0
        /// Block and character devices left out (written only with `--devices`).
        var devicesSkipped = 0
        /// Files whose `user.` attributes the target filesystem could not keep.
        var attributesNotKept = 0
        var failures: [CLIError] = []
    }

    let database: RecordDatabase
    let contents: FolderContents
    /// Whether block and character devices are made (`--devices`, as rsync's `-D`).
    var devices = false

    /// Lists what to write for the contents of `folder` (nil: the root), pre-order, with an
    /// explicit stack (no recursion, however deep the tree).
    func plan(_ folder: RecordID?) throws(CLIError) -> [Item] {
        var items: [Item] = []
        var pending = contents.children(of: folder).reversed().map { Item(entry: $0, parent: nil) }
        while let item = pending.popLast() {
            items.append(item)
            if item.entry.kind == .folder {
                let index = items.count - 1
                pending += contents.children(of: item.entry.recordID).reversed().map { Item(entry: $0, parent: index) }
            }
        }
        return items
    }

    /// The path of item `index` under `target`, for messages (built on demand).
    static func path(of index: Int, in items: [Item], target: String) -> String {
        var names: [String] = []
        var current: Int? = index
        while let i = current {
            names.append(items[i].entry.fileName)
            current = items[i].parent
        }
        return ([target] + names.reversed()).joined(separator: "/")
    }

    /// Writes the items into directory `target` (created if needed, followed as given); failures
    /// are collected, the rest goes on (the contents of a folder not written are left out).
    func run(_ items: [Item], into target: String, summary: inout Summary, progress: ProgressBar) throws(CLIError) {
        try FileSystem.makeDirectories(target)
        let chain = try DirectoryChain(opening: target)
        var failed = Set<Int>()
        var links: [Int] = []
        for (index, item) in items.enumerated() {
            defer { progress.advance() }
            if let parent = item.parent, failed.contains(parent) {
                failed.insert(index)
                continue
            }
            if item.entry.kind == .link {
                links.append(index)
                continue
            }
            do throws(CLIError) {
                try leave(chain, until: item.parent, items: items)
                try write(item, index: index, chain: chain, summary: &summary)
            } catch {
                failed.insert(index)
                summary.failures.append(error)
            }
        }
        do { try leave(chain, until: nil, items: items) } catch { summary.failures.append(error) }
        // Hard links last, to the file their target was written as.
        let written = Dictionary(items.indices.map { (items[$0].entry.recordID, $0) }, uniquingKeysWith: { first, _ in first })
        for index in links {
            do throws(CLIError) {
                try link(index, items: items, written: written, failed: failed, top: chain)
                summary.nodes += 1
            } catch {
                summary.failures.append(error)
            }
        }
    }

    /// Leaves directories until the deepest is the folder item `tag` (nil: the target), setting
    /// the mtime of each one left: its contents are written, so nothing changes it again.
    private func leave(_ chain: DirectoryChain, until tag: Int?, items: [Item]) throws(CLIError) {
        while chain.depth > 0, let index = chain.currentTag, index != tag {
            if let date = items[index].entry.modificationDate {
                try FileSystem.setModificationDate(date, of: nil, in: chain.current, path: chain.path())
            }
            try chain.leave()
        }
    }

    /// Writes one item (not a hard link) in the deepest directory of `chain`; a folder is entered.
    private func write(_ item: Item, index: Int, chain: DirectoryChain, summary: inout Summary) throws(CLIError) {
        let entry = item.entry
        let name = entry.fileName
        func path() -> String { chain.path(name) }
        if name.utf8.count > 255 {
            throw CLIError(.io, entry.displayPath, "file name is longer than 255 bytes; not exported")
        }
        let directory = chain.current
        switch entry.kind {
        case .folder:
            try FileSystem.makeDirectory(name, in: directory, path: path())
            try writeAttributes(of: entry.recordID, name: name, in: directory, path: path(), summary: &summary)
            try chain.enter(name, tag: index)
            summary.folders += 1
            return
        case .note, .attachment:
            // The exact bytes: a note's text or content asset, an attachment's content, streamed.
            let record: Record
            do { record = try database.record(for: entry.recordID) } catch { throw CLIError.store(error, subject: entry.path) }
            let bytes = StoredBytes(of: record)
            try FileSystem.replaceFile(name, in: directory, path: path(), modificationDate: entry.modificationDate) {
                (fd) throws(CLIError) in
                try bytes.write(to: fd, destination: path(), database: database)
            }
            if !(try FileSystem.setUserAttributes(ExtendedAttributes(record), of: name, in: directory, path: path())) {
                summary.attributesNotKept += 1
            }
            if entry.kind == .note { summary.notes += 1 } else { summary.attachments += 1 }
            return
        case .symlink:
            guard symlinkat(entry.symlinkTarget.map { CChar(bitPattern: $0) } + [0], directory, name) == 0 else {
                throw Self.failure("symlink", path(), name: name, in: directory)
            }
        case .special:
            // mkfifo for FIFOs; sockets and devices with mknod (devices need root, and --devices).
            let special = entry.metadata.flatMap { try? SpecialFile(record: $0.record) }
            let type: mode_t =
                switch special?.fileType {
                case .fifo, nil: S_IFIFO
                case .socket: S_IFSOCK
                case .character: S_IFCHR
                case .block: S_IFBLK
                }
            if (type == S_IFCHR || type == S_IFBLK) && !devices {
                summary.devicesSkipped += 1
                return
            }
            let permissions = mode_t(truncatingIfNeeded: entry.metadata?.record[FieldName.mode]?.int64Value ?? 0o644) & 0o7777
            guard mknodat(directory, name, type | permissions, dev_t(special?.rdev ?? 0)) == 0 else {
                throw Self.failure("mknod", path(), name: name, in: directory)
            }
        case .link:
            return  // written by link(_:items:written:failed:top:)
        }
        summary.nodes += 1
        if let date = entry.modificationDate { try FileSystem.setModificationDate(date, of: name, in: directory, path: path()) }
    }

    /// Writes the `user.` attributes of folder `id` on the directory made for it (none for the
    /// virtual `Recovered`, which has no record, or a folder whose record cannot be read: the
    /// directory is exported all the same).
    private func writeAttributes(
        of id: RecordID, name: String, in directory: Int32, path: @autoclosure () -> String, summary: inout Summary
    ) throws(CLIError) {
        guard let record = try? database.record(for: id) else { return }
        if !(try FileSystem.setUserAttributes(ExtendedAttributes(record), of: name, in: directory, path: path())) {
            summary.attributesNotKept += 1
        }
    }

    /// Makes hard link item `index` to the file its target was written as, opening both
    /// directories from the target down, a level at a time.
    private func link(_ index: Int, items: [Item], written: [RecordID: Int], failed: Set<Int>, top: DirectoryChain) throws(CLIError) {
        let entry = items[index].entry
        guard let targetID = entry.metadata?.record[FieldName.target]?.referenceValue?.recordID, let target = written[targetID],
            items[target].entry.kind != .link, !failed.contains(target)
        else {
            throw CLIError(.io, entry.displayPath, "hard link to a record that is not exported; not exported")
        }
        let from = try DirectoryChain(opening: top.topPath)
        try enterFolders(of: target, items: items, chain: from)
        let to = try DirectoryChain(opening: top.topPath)
        try enterFolders(of: index, items: items, chain: to)
        let path = to.path(entry.fileName)
        guard linkat(from.current, items[target].entry.fileName, to.current, entry.fileName, 0) == 0 else {
            throw Self.failure("link", path, name: entry.fileName, in: to.current)
        }
        // The new name changed the directory's mtime: set it back to its folder's.
        if let folder = items[index].parent, let date = items[folder].entry.modificationDate {
            try FileSystem.setModificationDate(date, of: nil, in: to.current, path: to.path())
        }
    }

    /// Enters, from the top of `chain`, the folders that item `index` is in.
    private func enterFolders(of index: Int, items: [Item], chain: DirectoryChain) throws(CLIError) {
        var folders: [Int] = []
        var current = items[index].parent
        while let folder = current {
            folders.append(folder)
            current = items[folder].parent
        }
        for folder in folders.reversed() { try chain.enter(items[folder].entry.fileName, tag: folder) }
    }

    /// The error for a failed call that makes `name`: what is in the way when it exists.
    private static func failure(_ call: String, _ path: @autoclosure () -> String, name: String, in directory: Int32) -> CLIError {
        let code = errno
        if code == EEXIST, let existing = try? FileSystem.status(name, in: directory, path: path()) {
            return CLIError(.io, path(), FileSystem.inTheWay(existing))
        }
        return CLIError.system(call, path(), errno: code)
    }
}
