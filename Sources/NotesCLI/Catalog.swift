import Foundation
import Notes
import RecordStore

/// One entry of a folder as the mount shows it: a folder, a note or an attachment, with its file name.
struct Entry: Sendable {
    var kind: EntryNames.Kind
    /// The record; nil for the virtual `Recovered` folder (``Catalog/recoveredID``).
    var metadata: RecordMetadata?
    /// The stored name (folder `name`, note `title`, attachment `name`).
    var name: String
    /// The name shown in the folder (``EntryNames``).
    var fileName: String
    /// The containing folder (``Catalog/recoveredID`` inside `Recovered`); nil at the root.
    var parent: RecordID?
    /// The path from the root, without a trailing `/`.
    var path: String

    var recordID: RecordID { metadata?.recordID ?? Catalog.recoveredID }
    var modificationDate: Date? { metadata?.record.modificationDate }
    /// Bytes of the note (text or content asset) or attachment content; nil for a folder.
    var size: Int? {
        guard kind != .link else { return metadata.flatMap(Catalog.entrySize) }
        return switch kind {
        case .folder: nil
        case .note: (metadata?.record["content"]?.assetValue.map { Int(clamping: $0.size) } ?? metadata?.byteCount(of: "text")) ?? 0
        case .attachment: metadata?.record["content"]?.assetValue.map { Int(clamping: $0.size) } ?? 0
        case .symlink: symlinkTarget.count
        case .special: 0
        case .link: nil
        }
    }
    /// A symlink's target (empty for other entries).
    var symlinkTarget: [UInt8] { metadata.flatMap { try? Symlink(record: $0.record) }?.target ?? [] }
    /// Whether this is a note kept as bytes (its `content` asset: not UTF-8 text, or over 8 MiB).
    var isBinaryNote: Bool { kind == .note && metadata?.record["content"]?.assetValue != nil }
    /// The path as listed: folders end in `/`.
    var displayPath: String { kind == .folder ? path + "/" : path }
}

/// The folder tree of a database, named as the mount names it, for resolving and printing paths.
///
/// Reads metadata only (the store's in-memory index); caches each folder's listing. Folders are
/// placed by ``FolderTree``: damaged ones (a parent cycle, a dangling parent) and notes whose
/// folder is gone show under a virtual `Recovered` folder at the root, as in the mount.
final class Catalog {
    let database: RecordDatabase
    private var listings: [RecordID?: [Entry]] = [:]
    private var folderPaths: [RecordID: String] = [:]
    private var cachedTree: FolderTree?

    /// The ID that stands for the virtual `Recovered` folder (no record has it).
    static let recoveredID = RecordID(recordName: FolderTree.recoveredRecordName)

    var tree: FolderTree {
        if let cachedTree { return cachedTree }
        let tree = FolderTree(database: database)
        cachedTree = tree
        return tree
    }

    init(database: RecordDatabase) { self.database = database }

    static func kind(of recordType: String) -> EntryNames.Kind? { EntryNames.kind(ofRecordType: recordType) }

    /// The record type of each kind of entry.
    static let recordTypes: [(EntryNames.Kind, String)] = [
        (.folder, Folder.recordType), (.note, Note.recordType), (.attachment, Attachment.recordType),
        (.symlink, Symlink.recordType), (.special, SpecialFile.recordType), (.link, Link.recordType),
    ]

    /// The size of a note's, attachment's or symlink's bytes (what a hard link to it shows).
    static func entrySize(_ metadata: RecordMetadata) -> Int? {
        guard let kind = kind(of: metadata.recordType), kind != .link else { return nil }
        return Entry(kind: kind, metadata: metadata, name: "", fileName: "", parent: nil, path: "").size
    }

    static func nameKey(_ kind: EntryNames.Kind) -> String { kind == .note ? "title" : "name" }
    static func parentKey(_ kind: EntryNames.Kind) -> String { kind == .folder ? "parent" : "folder" }

    /// The entries of a folder (nil: the root), sorted by file name byte order.
    func children(of folder: RecordID?) throws(CLIError) -> [Entry] {
        if let cached = listings[folder] { return cached }
        var metadata: [(EntryNames.Kind, RecordMetadata)] = []
        let tree = tree
        for (kind, type) in Self.recordTypes {
            let key = Self.parentKey(kind)
            if folder == Self.recoveredID {
                if kind == .folder { metadata += tree.recovered.compactMap { database.metadata(for: $0) }.map { (kind, $0) } }
            } else if let folder {
                metadata += database.referrers(to: folder, key: key).filter {
                    $0.recordType == type && (kind != .folder || tree.placement(ofFolder: $0.recordID) == .folder(folder))
                }.map { (kind, $0) }
            } else {
                let predicate: RecordStore.Predicate
                do { predicate = try RecordStore.Predicate(format: "%K == nil", .string(key)) } catch {
                    throw CLIError.store(error, subject: nil)
                }
                metadata += database.queryMetadata(Query(recordType: type, predicate: predicate)).map { (kind, $0) }
            }
        }
        if folder == Self.recoveredID {
            metadata += tree.strandedItems(in: database).compactMap { item in Self.kind(of: item.recordType).map { ($0, item) } }
        }
        var names: [String] = []
        for (kind, item) in metadata { names.append(try storedName(item, kind: kind)) }
        var candidates = zip(metadata, names).map { pair in
            EntryNames.Candidate(
                recordName: pair.0.1.recordID.recordName, kind: pair.0.0, name: pair.1, creationDate: pair.0.1.record.creationDate)
        }
        // The virtual Recovered folder at the root, when there is something in it (as the mount).
        let showsRecovered = folder == nil && (!tree.recovered.isEmpty || !tree.strandedItems(in: database).isEmpty)
        if showsRecovered {
            candidates.append(
                EntryNames.Candidate(
                    recordName: FolderTree.recoveredRecordName, kind: .folder, name: FolderTree.recoveredName, creationDate: .distantFuture)
            )
        }
        let fileNames = EntryNames.assign(candidates)
        let prefix = try folder.map { (id) throws(CLIError) in try self.folderPath(id) }
        var entries: [Entry] = []
        for index in candidates.indices {
            let path = prefix.map { $0 + "/" + fileNames[index] } ?? fileNames[index]
            let item = index < metadata.count ? metadata[index] : nil
            entries.append(
                Entry(
                    kind: item?.0 ?? .folder, metadata: item?.1, name: index < names.count ? names[index] : FolderTree.recoveredName,
                    fileName: fileNames[index], parent: folder, path: path))
        }
        entries.sort { $0.fileName.utf8.lexicographicallyPrecedes($1.fileName.utf8) }
        listings[folder] = entries
        return entries
    }

    /// Forgets cached listings (after this process changed the database).
    func invalidate() {
        listings = [:]
        folderPaths = [:]
        cachedTree = nil
    }

    /// The folder an entry is listed in (nil: the root), by the tree.
    private func shownParent(_ metadata: RecordMetadata) -> RecordID? {
        switch tree.placement(of: metadata) {
        case .root, nil: nil
        case .folder(let id): id
        case .recovered: Self.recoveredID
        }
    }

    /// The stored name of a record, read from its file when too long to be held in memory.
    private func storedName(_ metadata: RecordMetadata, kind: EntryNames.Kind) throws(CLIError) -> String {
        let key = Self.nameKey(kind)
        if metadata.isLarge(key) {
            do { return try database.record(for: metadata.recordID)[key]?.stringValue ?? "" } catch {
                throw CLIError.store(error, subject: metadata.recordID.recordName)
            }
        }
        return metadata.record[key]?.stringValue ?? ""
    }

    /// The path of a folder from the root.
    ///
    /// Walks up to the nearest folder whose path is known (or the root), then lists each folder
    /// on the way back down: no recursion, however deep the tree (the tree's placements end at
    /// the root or Recovered, so the walk up ends).
    func folderPath(_ id: RecordID) throws(CLIError) -> String {
        if let cached = folderPaths[id] { return cached }
        var pending: [(id: RecordID, parent: RecordID?)] = []
        var current: RecordID? = id
        while let folder = current, folderPaths[folder] == nil {
            let parent: RecordID?
            if folder == Self.recoveredID {
                parent = nil
            } else {
                guard let metadata = database.metadata(for: folder), tree.contains(folder) else {
                    throw CLIError(.notFound, folder.recordName, "no such folder")
                }
                parent = shownParent(metadata)
            }
            pending.append((folder, parent))
            current = parent
        }
        // Top down: each listing's own paths need only its folder's path, now known.
        for (folder, parent) in pending.reversed() {
            guard let entry = try children(of: parent).first(where: { $0.recordID == folder }) else {
                throw CLIError(.notFound, folder.recordName, "no such folder")
            }
            folderPaths[folder] = entry.path
        }
        return folderPaths[id] ?? ""
    }

    /// The entry of any record (nil when it is not a folder, note or attachment, or is gone).
    func entry(for id: RecordID) -> Entry? {
        guard let metadata = database.metadata(for: id), Self.kind(of: metadata.recordType) != nil else { return nil }
        return (try? children(of: shownParent(metadata)))?.first { $0.recordID == id }
    }

    static func components(_ path: String) -> [String] {
        path.split(separator: "/", omittingEmptySubsequences: true).map(String.init).filter { $0 != "." }
    }

    /// The entry a path names; nil for the root (an empty path or `/`).
    ///
    /// The last component matches a file name, or a note's file name without `.md`.
    /// - Throws: a not-found ``CLIError`` naming the path.
    func resolve(_ path: String) throws(CLIError) -> Entry? {
        let components = Self.components(path)
        var current: Entry?
        for (position, component) in components.enumerated() {
            if let current, current.kind != .folder { throw CLIError(.notFound, path, "\(current.path) is not a folder") }
            let entries = try children(of: current?.recordID)
            let isLast = position == components.count - 1
            let bytes = Array(component.utf8)
            if let found = entries.first(where: { Array($0.fileName.utf8) == bytes && (isLast || $0.kind == .folder) }) {
                current = found
            } else if isLast, let found = entries.first(where: { $0.kind == .note && Array($0.fileName.utf8) == bytes + Array(".md".utf8) })
            {
                current = found
            } else {
                throw CLIError(.notFound, path, "no such folder, note or attachment")
            }
        }
        return current
    }

    /// Resolves a path that must name a folder (or the root: nil).
    func resolveFolder(_ path: String) throws(CLIError) -> Entry? {
        let entry = try resolve(path)
        if let entry, entry.kind != .folder { throw CLIError(.notFound, path, "not a folder") }
        return entry
    }

    /// Splits a path for creating something: the existing folder it goes in and the new file name.
    ///
    /// - Throws: a usage ``CLIError`` for an empty path, not-found when the folder is missing.
    func resolveNew(_ path: String) throws(CLIError) -> (folder: Entry?, fileName: String) {
        var components = Self.components(path)
        guard let last = components.popLast() else { throw CLIError(.usage, path, "a name is needed") }
        let folder = try resolveFolder(components.joined(separator: "/"))
        if let folder { try Self.refuseVirtual(folder, path) }
        return (folder, last)
    }

    /// Refuses to change the virtual `Recovered` folder itself (it is no record).
    static func refuseVirtual(_ entry: Entry, _ path: String) throws(CLIError) {
        guard entry.metadata == nil else { return }
        throw CLIError(.usage, path, "\(FolderTree.recoveredName) is read-only: it shows damaged folders and notes; move them out of it")
    }
}
