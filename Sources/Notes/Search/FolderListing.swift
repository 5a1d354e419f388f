import Foundation
import RecordStore

/// The file names of one folder's entries as the mount shows them, and every folder's path: what
/// the search index stores so that a hit prints its path without opening the store.
///
/// Built on ``FolderTree`` and ``EntryNames`` (the rules the mount and the CLI share). Caches each
/// folder's listing; make a new one after the database changed.
public struct FolderListing {
    /// One entry: its record (nil for the virtual `Recovered` folder) and file name.
    public struct Item {
        public var recordName: String
        public var recordType: String?
        public var fileName: String
    }

    public let database: RecordDatabase
    public let tree: FolderTree
    private var listings: [String?: [Item]] = [:]

    /// The record name that stands for the virtual `Recovered` folder.
    public static let recoveredName = FolderTree.recoveredRecordName

    public init(database: RecordDatabase) {
        self.database = database
        tree = FolderTree(database: database)
    }

    /// The record name of the folder an entry is shown in (nil: the root; ``recoveredName``).
    public func shownFolder(of metadata: RecordMetadata) -> String? {
        switch tree.placement(of: metadata) {
        case .root, nil: nil
        case .folder(let id): id.recordName
        case .recovered: Self.recoveredName
        }
    }

    /// The entries of `folder` (a record name; nil: the root), with the mount's file names.
    public mutating func items(of folder: String?) -> [Item] {
        if let cached = listings[folder] { return cached }
        var members: [(EntryNames.Kind, RecordMetadata)] = []
        for type in [Folder.recordType] + FolderTree.itemTypes {
            guard let kind = EntryNames.kind(ofRecordType: type) else { continue }
            let key = kind == .folder ? "parent" : "folder"
            if folder == Self.recoveredName {
                if kind == .folder { members += tree.recovered.compactMap { database.metadata(for: $0) }.map { (kind, $0) } }
            } else if let folder {
                let id = RecordID(recordName: folder)
                members += database.referrers(to: id, key: key).filter {
                    $0.recordType == type && (kind != .folder || tree.placement(ofFolder: $0.recordID) == .folder(id))
                }.map { (kind, $0) }
            } else {
                guard let atRoot = try? Predicate(format: "%K == nil", .string(key)) else { continue }
                members += database.queryMetadata(Query(recordType: type, predicate: atRoot)).map { (kind, $0) }
            }
        }
        if folder == Self.recoveredName {
            members += tree.strandedItems(in: database).compactMap { item in
                EntryNames.kind(ofRecordType: item.recordType).map { ($0, item) }
            }
        }
        var candidates = members.map { kind, metadata in
            EntryNames.Candidate(
                recordName: metadata.recordID.recordName, kind: kind, name: storedName(metadata, kind: kind),
                creationDate: metadata.record.creationDate)
        }
        if folder == nil && (!tree.recovered.isEmpty || !tree.strandedItems(in: database).isEmpty) {
            candidates.append(
                EntryNames.Candidate(
                    recordName: Self.recoveredName, kind: .folder, name: FolderTree.recoveredName, creationDate: .distantFuture))
        }
        let fileNames = EntryNames.assign(candidates)
        let items = candidates.indices.map { i in
            Item(
                recordName: candidates[i].recordName, recordType: i < members.count ? members[i].1.recordType : nil, fileName: fileNames[i])
        }
        listings[folder] = items
        return items
    }

    /// Every folder's path from the root (no trailing `/`), by record name; the virtual
    /// `Recovered` folder's too when it shows. Walks down from the root: no recursion.
    public mutating func folderPaths() -> [String: String] {
        var paths: [String: String] = [:]
        var pending: [(folder: String?, path: String)] = [(nil, "")]
        while let (folder, path) = pending.popLast() {
            for item in items(of: folder) where item.recordType == Folder.recordType || (item.recordType == nil && folder == nil) {
                let childPath = path.isEmpty ? item.fileName : path + "/" + item.fileName
                guard paths[item.recordName] == nil else { continue }
                paths[item.recordName] = childPath
                pending.append((item.recordName, childPath))
            }
        }
        return paths
    }

    /// The stored name of a record (folder `name`, note `title`, others `name`), read from its
    /// file when too long for the store's memory.
    private func storedName(_ metadata: RecordMetadata, kind: EntryNames.Kind) -> String {
        let key = kind == .note ? "title" : "name"
        if metadata.isLarge(key) { return (try? database.record(for: metadata.recordID))?[key]?.stringValue ?? "" }
        return metadata.record[key]?.stringValue ?? ""
    }
}
