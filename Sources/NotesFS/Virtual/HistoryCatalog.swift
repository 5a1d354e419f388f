import Notes
import RecordStore

/// The paths of `.history` (``NoteHistory``): every note and attachment that has versions, live
/// or deleted, at its path in the mount, and the folders above them.
///
/// Made from the store index's table of the versions' `note` field (the notes that have
/// versions; only deleted notes' versions are looked at), then the mount's paths of the live
/// records (under one state lock). ``NoteHistory`` keeps it until the store or the mount's
/// names change. Order of naming, so that names are stable and unique:
/// 1. The folders above every note (the mount's names; `Recovered` for a deleted note whose
///    folder is gone too).
/// 2. Live notes and attachments: their mount path, unique as the mount made it. One the mount
///    does not show now (hidden by an editor's rename) is left out until it shows again.
/// 3. Deleted ones, by record name: their last version's title in their last folder; a name taken
///    there gets the mount's record-name suffix (` (1a2b3c)`, longer, then a counter).
struct HistoryCatalog {
    /// The name of the directory for deleted notes whose folder is gone (as the mount and
    /// `note undelete` call it).
    static let recoveredName = "Recovered"

    /// A directory's path below `.history` → the names of the directories in it, sorted.
    private(set) var directories: [[String]: [String]] = [[]: []]
    /// A note's (or attachment's) path below `.history` → its record name.
    private(set) var notes: [[String]: String] = [:]
    /// A note's path below `.history` → whose access its directory and versions give: the live
    /// note's, or what a deleted note's last version kept.
    private(set) var noteAccess: [[String]: VirtualAccess] = [:]
    /// The names taken in each directory.
    private var taken: [[String]: Set<String>] = [:]

    init(_ context: VirtualContext) {
        let database = context.database
        // The notes that have versions: from the index's table of the versions' `note` field
        // (kept by `VersionHistory.install`), else by one pass over the versions.
        let noteNames =
            database.indexedValues(ofField: FieldName.note, ofType: Version.recordType)
            ?? Array(Set(database.metadata(ofType: Version.recordType).compactMap { $0.field(FieldName.note)?.stringValue }))
        var liveNames: [String] = []
        var liveRecords: [RecordMetadata] = []
        var deleted: [(noteName: String, version: Version)] = []
        for noteName in noteNames.sorted() where !noteName.isEmpty {
            if let metadata = database.metadata(for: RecordID(recordName: noteName)) {
                guard metadata.recordType == Note.recordType || metadata.recordType == Attachment.recordType else { continue }
                liveNames.append(noteName)
                liveRecords.append(metadata)
            } else if let last = VersionHistory.versions(ofNoteNamed: noteName, in: database).max(by: {
                ($0.madeAt, $0.recordID.recordName) < ($1.madeAt, $1.recordID.recordName)
            }) {
                deleted.append((noteName, last))  // named by its last version: title and folder
            }
        }
        var live: [(path: [String], noteName: String)] = []
        for (noteName, path) in zip(liveNames, context.mountPaths(liveRecords)) {
            guard let path, !path.isEmpty else { continue }
            live.append((path, noteName))
        }
        let folders = Self.folderPaths(of: deleted.map(\.version), context)
        for (path, _) in live { addFolders(path.dropLast()) }
        for folder in folders { addFolders(folder[...]) }
        for (path, noteName) in live {
            addNote(Array(path.dropLast()), path[path.count - 1], noteName, access: .record(RecordID(recordName: noteName)))
        }
        for ((noteName, version), folder) in zip(deleted, folders) {
            let kind: EntryNames.Kind = version.noteType == Attachment.recordType ? .attachment : .note
            let liveFolder = version.folderName.flatMap { name in
                database.metadata(for: RecordID(recordName: name))?.recordType == Folder.recordType ? RecordID(recordName: name) : nil
            }
            addNote(
                folder, unique(EntryNames.baseName(version.title, kind: kind), in: folder, noteName), noteName,
                access: .deleted(Ownership(version.record), folder: liveFolder, folderGone: version.folderName != nil && liveFolder == nil))
        }
        for key in directories.keys { directories[key]?.sort() }
    }

    /// Where deleted notes' folders show now: their paths in the mount, the root, or `Recovered`.
    private static func folderPaths(of versions: [Version], _ context: VirtualContext) -> [[String]] {
        var names: [String] = []
        var records: [RecordMetadata] = []
        for name in Set(versions.compactMap(\.folderName)).sorted() {
            if let folder = context.database.metadata(for: RecordID(recordName: name)), folder.recordType == Folder.recordType {
                names.append(name)
                records.append(folder)
            }
        }
        let paths = Dictionary(uniqueKeysWithValues: zip(names, context.mountPaths(records)))
        return versions.map { version in
            guard let folderName = version.folderName else { return [] }
            return (paths[folderName] ?? nil) ?? [recoveredName]
        }
    }

    private mutating func addFolders(_ path: ArraySlice<String>) {
        var parent: [String] = []
        for name in path {
            if taken[parent, default: []].insert(name).inserted { directories[parent, default: []].append(name) }
            parent.append(name)
            if directories[parent] == nil { directories[parent] = [] }
        }
    }

    private mutating func addNote(_ folder: [String], _ name: String, _ noteName: String, access: VirtualAccess) {
        let path = folder + [name]
        guard notes[path] == nil, directories[path] == nil else { return }
        taken[folder, default: []].insert(name)
        directories[folder, default: []].append(name)
        notes[path] = noteName
        noteAccess[path] = access
    }

    /// Whose access directory `path` below `.history` gives: its note's, `Recovered`'s (the tree's),
    /// or the real folder's at the same path.
    func access(of path: [String]) -> VirtualAccess {
        if let access = noteAccess[path] { return access }
        if path.first == Self.recoveredName, path.count == 1 { return .tree }
        return .realPath(path)
    }

    /// `fileName`, or with the record-name suffix (then a counter) when it is taken in `folder`.
    private func unique(_ fileName: String, in folder: [String], _ noteName: String) -> String {
        let used = taken[folder] ?? []
        if !used.contains(fileName) { return fileName }
        let characters = EntryNames.suffixCharacters(noteName)
        for length in [6, 8, 12, characters.count] where length > 0 && length <= characters.count {
            let name = EntryNames.suffixed(fileName, String(characters.prefix(length)))
            if !used.contains(name) { return name }
        }
        var counter = 2
        while used.contains(EntryNames.suffixed(fileName, "\(characters)-\(counter)")) { counter += 1 }
        return EntryNames.suffixed(fileName, "\(characters)-\(counter)")
    }
}
