import Foundation
import RecordStore

/// What each folder holds and what each entry is named: the one answer the mount, the CLI and
/// search give.
///
/// A folder (a record name; nil: the root; ``recoveredID``: the virtual `Recovered` folder)
/// shows the folders whose `parent` it is and the items (notes, attachments, symlinks, special
/// files, hard links) whose `folder` it is, as ``FolderTree`` places them: folders on a parent
/// cycle or with a dangling parent, and items whose folder is gone, show under `Recovered`, which
/// the root shows while it holds something. Each entry's file name follows ``EntryNames``.
///
/// The rules themselves are static (``forEachMember(of:tree:in:_:)``, ``storedName(of:in:)``,
/// ``candidate(for:name:)``), so that the mount, which keeps its own listings by inode and
/// updates them change by change, names with them too. An instance reads metadata only (the
/// store's in-memory index) and caches each folder's entries and paths: make a new one, or call
/// ``invalidate()``, after the database changed.
public final class FolderContents {
    public let database: RecordDatabase
    private var cachedTree: FolderTree?
    /// Folders placed one walk up at a time, while the whole tree is not needed (``placement(ofFolder:)``).
    private var walkedPlacements: [RecordID: FolderTree.Placement] = [:]
    private var listings: [RecordID?: Listing] = [:]
    /// The file names of folders whose listing is not kept (``fileName(of:in:)``), by record.
    private var fileNames: [RecordID?: [RecordID: String]] = [:]
    var folderPathCache: [RecordID: String] = [:]
    /// Whether ``namesakes(showingAs:in:)`` keeps what it found (``keptNamesakes``): a catch-up of
    /// the text index asks for each saved record's name twice, to name the record and to give its
    /// namesakes their names, with no commit of its own in between.
    var keepsNamesakes = false
    /// What ``namesakes(showingAs:in:)`` found, by folder and name, while ``keepsNamesakes``.
    var keptNamesakes: [RecordID?: [String: [RecordMetadata]?]] = [:]
    /// How many entries ``entry(for:)`` named from their namesakes, by folder.
    private var namesakeLookups: [RecordID?: Int] = [:]
    /// After this many entries of one folder named from their namesakes, the folder is listed.
    static let namesakeLookupsBeforeListing = 16

    /// Counts one more entry of `folder` to be named from its namesakes; returns the count.
    func countNamesakeLookup(in folder: RecordID?) -> Int {
        namesakeLookups[folder, default: 0] += 1
        return namesakeLookups[folder, default: 0]
    }

    /// The ID that stands for the virtual `Recovered` folder (no record has it).
    public static let recoveredID = RecordID(recordName: FolderTree.recoveredRecordName)

    /// The contents of `database`'s folders; `tree`: its folder tree when the caller has it.
    public init(database: RecordDatabase, tree: FolderTree? = nil) {
        self.database = database
        cachedTree = tree
    }

    /// The whole folder hierarchy, computed on first use: reads every folder's metadata. Only the
    /// root's listing and `Recovered`'s need it; a folder's placement walks up from it
    /// (``placement(ofFolder:)``).
    public var tree: FolderTree {
        if let cachedTree { return cachedTree }
        let tree = FolderTree(database: database)
        cachedTree = tree
        walkedPlacements = [:]
        return tree
    }

    /// Where folder `id` is shown, as ``tree`` places it; nil when `id` is no folder. Without the
    /// whole tree, found by walking up from `id` (``FolderTree/place(from:parent:in:parentOf:)``),
    /// so that a command that follows one path reads the folders on it, not every folder.
    public func placement(ofFolder id: RecordID) -> FolderTree.Placement? {
        if let cachedTree { return cachedTree.placement(ofFolder: id) }
        if let placed = walkedPlacements[id] { return placed }
        let database = database
        let parentOf = { (id: RecordID) -> RecordID?? in
            guard let metadata = database.metadata(for: id), metadata.recordType == Folder.recordType else { return nil }
            return .some(FolderTree.parent(of: metadata))
        }
        guard case .some(let parent) = parentOf(id) else { return nil }
        FolderTree.place(from: id, parent: parent, in: &walkedPlacements, parentOf: parentOf)
        return walkedPlacements[id]
    }

    /// Where any folder, note or attachment is shown, as ``tree`` places it; nil for other types.
    public func placement(of metadata: RecordMetadata) -> FolderTree.Placement? {
        if let cachedTree { return cachedTree.placement(of: metadata) }
        return FolderTree.placement(of: metadata, placingFolders: placement(ofFolder:))
    }

    /// Forgets cached listings, paths and the tree (after this process changed the database).
    public func invalidate() {
        listings = [:]
        fileNames = [:]
        folderPathCache = [:]
        cachedTree = nil
        walkedPlacements = [:]
        keptNamesakes = [:]
    }

    /// One folder's named entries, and where each record is among them (built at the first lookup
    /// by record ID, so that finding one entry neither scans nor copies the others).
    private struct Listing {
        let entries: [FolderEntry]
        var positions: [RecordID: Int]?
    }

    // MARK: The rules

    /// The field that holds an entry's stored name: a note's `title`, everything else's `name`.
    public static func nameKey(_ kind: EntryNames.Kind) -> String { kind == .note ? FieldName.title : FieldName.name }

    /// The field that places an entry: a folder's `parent`, everything else's `folder`.
    public static func parentKey(_ kind: EntryNames.Kind) -> String { kind == .folder ? FieldName.parent : FieldName.folder }

    /// The field that places a record of `recordType` (nil for a type no folder shows).
    static func parentKey(ofRecordType recordType: String) -> String? { EntryNames.kind(ofRecordType: recordType).map(parentKey) }

    /// Calls `body` with each record `folder` shows (nil: the root; ``recoveredID``), in no
    /// particular order, without the virtual `Recovered` entry of the root (see
    /// ``FolderTree/showsRecovered(in:)``).
    ///
    /// The root's records are those with no parent, found through the index's table of the
    /// reference keys each record holds (a field the index leaves out as large is there, so not
    /// missing); a folder's through the reference index (no scan).
    public static func forEachMember(
        of folder: RecordID?, tree: FolderTree, in database: RecordDatabase, _ body: (RecordMetadata) -> Void
    ) {
        forEachMember(of: folder, in: database, placingFolders: tree.placement(ofFolder:), tree: { tree }, body)
    }

    /// ``forEachMember(of:tree:in:_:)`` with this instance's placements: the whole tree only for
    /// `Recovered`.
    public func forEachMember(of folder: RecordID?, _ body: (RecordMetadata) -> Void) {
        Self.forEachMember(of: folder, in: database, placingFolders: placement(ofFolder:), tree: { tree }, body)
    }

    private static func forEachMember(
        of folder: RecordID?, in database: RecordDatabase, placingFolders: (RecordID) -> FolderTree.Placement?,
        tree: () -> FolderTree, _ body: (RecordMetadata) -> Void
    ) {
        if folder == recoveredID {
            let tree = tree()
            for id in tree.recovered { if let metadata = database.metadata(for: id) { body(metadata) } }
            for metadata in tree.strandedItems(in: database) { body(metadata) }
        } else if let folder {
            // Folders shown here: a cycle member that names this one as parent is under Recovered.
            for metadata in database.referrers(to: folder, key: FieldName.parent)
            where metadata.recordType == Folder.recordType && placingFolders(metadata.recordID) == .folder(folder) {
                body(metadata)
            }
            for metadata in database.referrers(to: folder, key: FieldName.folder) where FolderTree.itemTypes.contains(metadata.recordType) {
                body(metadata)
            }
        } else {
            for type in [Folder.recordType] + FolderTree.itemTypes {
                guard let key = parentKey(ofRecordType: type) else { continue }
                for metadata in database.metadata(ofType: type, withoutReferenceIn: key)
                where metadata.field(key) == nil && !metadata.isLarge(key) {
                    body(metadata)
                }
            }
        }
    }

    /// The stored name of a record (a note's `title`, anything else's `name`), read from its file
    /// when it is too long for the store's memory; "" when it has none or cannot be read (then it
    /// shows as ``EntryNames/untitled``).
    public static func storedName(of metadata: RecordMetadata, in database: RecordDatabase) -> String {
        let key = metadata.recordType == Note.recordType ? FieldName.title : FieldName.name
        if let name = metadata.field(key)?.stringValue { return name }
        guard metadata.isLarge(key) else { return "" }
        return (try? database.record(for: metadata.recordID))?[key]?.stringValue ?? ""
    }

    /// The date that decides who keeps a contested name (the earliest keeps it): the creation
    /// date; a record without one (written by hand or by an old client) counts as the earliest.
    public static func namingDate(of metadata: RecordMetadata) -> Date { metadata.creationDate ?? .distantPast }

    /// What ``EntryNames/assign(_:)`` needs of a record shown with stored name `name`; nil for a
    /// type no folder shows.
    public static func candidate(for metadata: RecordMetadata, name: String) -> EntryNames.Candidate? {
        guard let kind = EntryNames.kind(ofRecordType: metadata.recordType) else { return nil }
        return EntryNames.Candidate(
            recordName: metadata.recordID.recordName, kind: kind, name: name, creationDate: namingDate(of: metadata))
    }

    /// The virtual `Recovered` folder as a candidate for a name at the root: created last, so a
    /// real folder named `Recovered` keeps its name.
    public static let recoveredCandidate = EntryNames.Candidate(
        recordName: FolderTree.recoveredRecordName, kind: .folder, name: FolderTree.recoveredName, creationDate: .distantFuture)

    // MARK: Named entries

    /// The folder an entry is shown in (nil: the root; ``recoveredID``); nil also for records no
    /// folder shows.
    public func shownFolder(of metadata: RecordMetadata) -> RecordID? {
        switch placement(of: metadata) {
        case .root, nil: nil
        case .folder(let id): id
        case .recovered: Self.recoveredID
        }
    }

    /// Whether ``children(of:)`` of `folder` is cached.
    func isListed(_ folder: RecordID?) -> Bool { listings[folder] != nil }

    /// The entries of `folder` (nil: the root; ``recoveredID``), named, sorted by file name
    /// byte order; empty when `folder` is no folder.
    public func children(of folder: RecordID?) -> [FolderEntry] {
        if let cached = listings[folder] { return cached.entries }
        guard let entries = makeChildren(of: folder) else { return [] }
        listings[folder] = Listing(entries: entries, positions: nil)
        return entries
    }

    /// ``children(of:)``, not kept when it was not kept already.
    func listing(of folder: RecordID?) -> [FolderEntry] { listings[folder]?.entries ?? makeChildren(of: folder) ?? [] }

    /// ``children(of:)`` computed again, not kept; nil when `folder` is no folder.
    private func makeChildren(of folder: RecordID?) -> [FolderEntry]? {
        if let folder, folder != Self.recoveredID, placement(ofFolder: folder) == nil { return nil }
        var members: [(EntryNames.Candidate, RecordMetadata?)] = []
        forEachMember(of: folder) { metadata in
            if let candidate = Self.candidate(for: metadata, name: Self.storedName(of: metadata, in: database)) {
                members.append((candidate, metadata))
            }
        }
        if folder == nil && tree.showsRecovered(in: database) { members.append((Self.recoveredCandidate, nil)) }
        let fileNames = EntryNames.assign(members.map(\.0))
        let prefix = folder.flatMap { try? folderPath($0) }
        // Sorted as positions, then made in order: a sort of the entries moved each one (with its
        // metadata) many times.
        return fileNames.indices.sorted { fileNames[$0].precedesInByteOrder(fileNames[$1]) }.map { position in
            let (candidate, metadata) = members[position]
            let fileName = fileNames[position]
            return FolderEntry(
                kind: candidate.kind, metadata: metadata, name: candidate.name, fileName: fileName, parent: folder,
                path: prefix.map { $0 + "/" + fileName } ?? fileName)
        }
    }

    /// The entry of record `id` in `folder` (nil: the root; ``recoveredID``), as
    /// ``children(of:)`` lists it; nil when `folder` does not show it.
    ///
    /// The first lookup in a listing indexes it by record ID; each one after that is a hash
    /// lookup (a search of the listing would copy every entry before the one found).
    public func entry(_ id: RecordID, in folder: RecordID?) -> FolderEntry? {
        if listings[folder] == nil { _ = children(of: folder) }
        guard var listing = listings[folder] else { return nil }  // no folder: nothing cached
        if listing.positions == nil {
            listing.positions = Self.positions(of: listing.entries)
            listings[folder] = listing
        }
        return listing.positions?[id].map { listing.entries[$0] }
    }

    /// The file name of record `id` in `folder` (nil: the root; ``recoveredID``), as
    /// ``children(of:)`` names it; nil when `folder` does not show it.
    ///
    /// Keeps only the folder's file names, not its listing (unless that is kept already): naming
    /// every record of a large database this way (a full-text index build) holds a name a record,
    /// not its metadata and path as well.
    public func fileName(of id: RecordID, in folder: RecordID?) -> String? {
        if listings[folder] != nil { return entry(id, in: folder)?.fileName }
        if let names = fileNames[folder] { return names[id] }
        guard let entries = makeChildren(of: folder) else { return nil }
        var names: [RecordID: String] = [:]
        names.reserveCapacity(entries.count)
        for position in entries.indices.reversed() { names[entries[position].recordID] = entries[position].fileName }
        fileNames[folder] = names
        return names[id]
    }

    /// The file name of the record `metadata` describes, shown in `folder` (``shownFolder(of:)``),
    /// as ``entry(for:)`` names it: from its namesakes while few of the folder's records were named
    /// that way, else from the folder's file names (``fileName(of:in:)``), keeping those and not
    /// the listing. A catch-up of many saves names records of every folder it touched, and kept
    /// listings would hold each of their entries' metadata and path until it ends.
    public func fileName(for metadata: RecordMetadata, in folder: RecordID?) -> String? {
        if fileNames[folder] == nil, let entry = entryFromNamesakes(metadata, in: folder) { return entry.fileName }
        return fileName(of: metadata.recordID, in: folder)
    }

    /// The entry of `metadata` in `folder` named from its namesakes (``uncontestedEntry(_:)``),
    /// while the folder is not listed and few of its records were named that way: many of one
    /// folder's records (a query's hits in one folder) cost less as one listing. Nil: list it.
    func entryFromNamesakes(_ metadata: RecordMetadata, in folder: RecordID?) -> FolderEntry? {
        guard !isListed(folder), countNamesakeLookup(in: folder) <= Self.namesakeLookupsBeforeListing else { return nil }
        return uncontestedEntry(metadata)
    }

    /// Each record's position in `entries` (the first when one were listed twice).
    private static func positions(of entries: [FolderEntry]) -> [RecordID: Int] {
        var positions: [RecordID: Int] = [:]
        positions.reserveCapacity(entries.count)
        for position in entries.indices.reversed() { positions[entries[position].recordID] = position }
        return positions
    }
}
