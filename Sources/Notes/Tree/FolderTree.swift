import RecordStore

/// The folder hierarchy of a database, computed once, with structural damage made visible.
///
/// A folder's `parent` chain should end at the root. In a damaged (or hand-edited) database it may
/// instead end at a record that is missing or is not a folder (a dangling parent), or run in a
/// cycle; such folders would be reachable from nowhere and vanish with their notes. Here they are
/// placed under a virtual, read-only `Recovered` folder at the root instead:
///
/// - a folder whose chain reaches the root is shown under its parent (or at the root);
/// - a folder whose parent is missing or not a folder, and every member of a cycle, is shown under
///   `Recovered`;
/// - any other unreachable folder (one whose chain leads into such a folder) stays under its
///   parent, which is now shown.
///
/// So the placements always form a forest rooted at the root and `Recovered`: walking up from any
/// folder ends. Notes and attachments whose `folder` is missing or not a folder also go under
/// `Recovered` (see ``placement(ofItemIn:)``). The mount and the CLI both name things by this.
public struct FolderTree: Sendable, Equatable {
    /// Where a folder, note or attachment is shown.
    public enum Placement: Hashable, Sendable {
        case root
        case folder(RecordID)
        case recovered
    }

    /// Record types shown as files in a folder (by their `folder` reference).
    public static let itemTypes = [Note.recordType, Attachment.recordType, Symlink.recordType, SpecialFile.recordType, Link.recordType]

    /// The virtual folder's name at the root.
    public static let recoveredName = "Recovered"
    /// The record name the virtual folder uses when names are assigned (``EntryNames``); no record
    /// has it. Its creation date is `.distantFuture`, so that a real folder named `Recovered` keeps
    /// its name and the virtual one takes the suffix.
    public static let recoveredRecordName = "notesfs.Recovered"

    private var placements: [RecordID: Placement] = [:]
    /// The folders placed directly under `Recovered`, by record name.
    public private(set) var recovered: [RecordID] = []

    /// The tree of `parents`: every folder and the record its `parent` names (nil at the root).
    public init(parents: [RecordID: RecordID?]) {
        // Every folder is walked over once: O(folders).
        for (start, parent) in parents where placements[start] == nil {
            Self.place(from: start, parent: parent, in: &placements) { parents[$0] }
        }
        recovered = placements.compactMap { $0.value == .recovered ? $0.key : nil }.sorted { $0.recordName < $1.recordName }
    }

    /// Places folder `start` (whose `parent` names `parent`, nil at the root) and the folders on
    /// its way up that `placements` does not hold yet, as the whole tree places them.
    ///
    /// Goes up until it meets the root, a placed folder, a missing parent, or its own path (a
    /// cycle), asking `parentOf` for each folder on the way: nil when the record is missing or no
    /// folder, `.some(nil)` at the root. So one folder's placement costs the folders above it
    /// (``FolderContents`` places folders this way until it needs the whole tree), and every
    /// walk, whatever folder it starts from, places alike.
    static func place(
        from start: RecordID, parent: RecordID?, in placements: inout [RecordID: Placement], parentOf: (RecordID) -> RecordID??
    ) {
        var path: [(id: RecordID, parent: RecordID)] = []
        var onPath: [RecordID: Int] = [:]
        var current = start
        var currentParent = parent
        while placements[current] == nil {
            if let position = onPath[current] {
                for member in path[position...] { placements[member.id] = .recovered }
                break
            }
            guard let next = currentParent else {
                placements[current] = .root
                break
            }
            onPath[current] = path.count
            path.append((current, next))
            if placements[next] != nil || onPath[next] != nil {
                current = next  // placed, or a cycle: the loop's test ends the walk
                continue
            }
            guard case .some(let nextParent) = parentOf(next) else {
                placements[current] = .recovered  // a dangling parent
                break
            }
            current = next
            currentParent = nextParent
        }
        // The rest of the path hangs under its parent, which is placed now.
        for member in path where placements[member.id] == nil { placements[member.id] = .folder(member.parent) }
    }

    /// The tree of every folder in `database` (its in-memory index; no record file is read).
    public init(database: RecordDatabase) {
        var parents: [RecordID: RecordID?] = [:]
        for metadata in database.metadata(ofType: Folder.recordType) {
            parents[metadata.recordID] = .some(Self.parent(of: metadata))
        }
        self.init(parents: parents)
    }

    /// Updates the tree for a change that saved `saved` folders and deleted `deleted` records, in
    /// O(changed folders) when it can tell the placements of no other folder move: the tree holds
    /// no recovered folder, each saved folder is new (or keeps its parent) with a parent at the
    /// root or in the tree, and no folder left hangs under a deleted one. Returns false (and
    /// changes nothing) otherwise: then the caller computes the tree again.
    public mutating func update(saving saved: [RecordMetadata], deleting deleted: [RecordID]) -> Bool {
        guard recovered.isEmpty else { return false }
        // Checked before anything changes, and only what changes is written: most updates save
        // folders where they are (a new mtime at every entry change in them) and delete notes,
        // and a copy of the whole table for them cost each rename's plan O(folders).
        var gone = Set<RecordID>()
        for id in deleted where placements[id] != nil { gone.insert(id) }
        if !gone.isEmpty {
            for (id, placement) in placements where !gone.contains(id) {
                if case .folder(let parent) = placement, gone.contains(parent) { return false }
            }
        }
        var added: [RecordID: Placement] = [:]
        func current(_ id: RecordID) -> Placement? { added[id] ?? (gone.contains(id) ? nil : placements[id]) }
        for metadata in saved where metadata.recordType == Folder.recordType {
            let parent = Self.parent(of: metadata)
            let placement: Placement
            if let parent {
                guard parent != metadata.recordID, let above = current(parent), above != .recovered else { return false }
                placement = .folder(parent)
            } else {
                placement = .root
            }
            // A folder that moves could be an ancestor of its new parent (a cycle): computed again.
            if let old = current(metadata.recordID) {
                guard old == placement else { return false }
            } else {
                added[metadata.recordID] = placement
            }
        }
        for id in gone { placements[id] = nil }
        for (id, placement) in added { placements[id] = placement }
        return true
    }

    static let parentKey = FieldName.parent
    static let folderKey = FieldName.folder

    /// The folder a folder's `parent` names; nil at the root (or when it names no record).
    static func parent(of folder: RecordMetadata) -> RecordID? { folder.field(parentKey)?.referenceValue?.recordID }

    /// Where folder `id` is shown; nil when it is not a folder of this tree.
    public func placement(ofFolder id: RecordID) -> Placement? { placements[id] }

    /// Whether `id` is a folder of this tree.
    public func contains(_ id: RecordID) -> Bool { placements[id] != nil }

    /// Where a note or attachment whose `folder` reference is `folder` is shown.
    public func placement(ofItemIn folder: RecordID?) -> Placement {
        Self.placement(ofItemIn: folder, placingFolders: placement(ofFolder:))
    }

    /// ``placement(ofItemIn:)`` when `placingFolders` places each folder (nil: no folder).
    static func placement(ofItemIn folder: RecordID?, placingFolders: (RecordID) -> Placement?) -> Placement {
        guard let folder else { return .root }
        return placingFolders(folder) != nil ? .folder(folder) : .recovered
    }

    /// Where any folder, note or attachment is shown; nil for other record types.
    public func placement(of metadata: RecordMetadata) -> Placement? {
        Self.placement(of: metadata, placingFolders: placement(ofFolder:))
    }

    /// Where any folder, note or attachment is shown when `placingFolders` places each folder (nil:
    /// no folder); nil for other record types.
    static func placement(of metadata: RecordMetadata, placingFolders: (RecordID) -> Placement?) -> Placement? {
        switch metadata.recordType {
        case Folder.recordType: return placingFolders(metadata.recordID)
        case let type where itemTypes.contains(type):
            return placement(ofItemIn: metadata.field(folderKey)?.referenceValue?.recordID, placingFolders: placingFolders)
        default: return nil
        }
    }

    /// Whether the root shows the virtual `Recovered` folder: while it holds a folder or an item.
    public func showsRecovered(in database: RecordDatabase) -> Bool {
        !recovered.isEmpty || !strandedItems(in: database).isEmpty
    }

    /// Notes and attachments whose folder is missing or not a folder (shown under `Recovered`).
    /// Looks only at the referenced records that are not folders of this tree, through the
    /// store's reference index (no scan of every note).
    public func strandedItems(in database: RecordDatabase) -> [RecordMetadata] {
        let types = Set(Self.itemTypes)
        return database.referrers(key: Self.folderKey, toRecordsWhere: { !contains(RecordID(recordName: $0)) })
            .filter { types.contains($0.recordType) }
            .sorted { $0.recordID < $1.recordID }
    }
}
