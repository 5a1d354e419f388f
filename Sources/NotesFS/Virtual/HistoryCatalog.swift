import Notes
import RecordStore

/// The paths of `.history` (``NoteHistory``): every note and attachment that has versions, live
/// or deleted, at its path in the mount, and the folders above them.
///
/// Made from every `Version` in the store's index (one pass; long texts are not read), then the
/// mount's paths of the live records. Order of naming, so that names are stable and unique:
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
    /// The names taken in each directory.
    private var taken: [[String]: Set<String>] = [:]

    init(_ context: VirtualContext) {
        var newest: [String: Version] = [:]
        for metadata in context.database.metadata(ofType: Version.recordType) {
            guard let version = try? Version(record: metadata.record) else { continue }
            if let known = newest[version.noteName],
                (known.madeAt, known.recordID.recordName) >= (version.madeAt, version.recordID.recordName)
            {
                continue
            }
            newest[version.noteName] = version
        }
        var live: [(path: [String], noteName: String)] = []
        var deleted: [(folder: [String], fileName: String, noteName: String)] = []
        for (noteName, version) in newest.sorted(by: { $0.key < $1.key }) {
            if let metadata = context.database.metadata(for: RecordID(recordName: noteName)) {
                guard metadata.recordType == Note.recordType || metadata.recordType == Attachment.recordType,
                    let path = context.mountPath(metadata), !path.isEmpty
                else { continue }
                live.append((path, noteName))
            } else {
                let kind: EntryNames.Kind = version.noteType == Attachment.recordType ? .attachment : .note
                deleted.append((Self.folderPath(of: version, context), EntryNames.baseName(version.title, kind: kind), noteName))
            }
        }
        for (path, _) in live { addFolders(path.dropLast()) }
        for (folder, _, _) in deleted { addFolders(folder[...]) }
        for (path, noteName) in live { addNote(Array(path.dropLast()), path[path.count - 1], noteName) }
        for (folder, fileName, noteName) in deleted { addNote(folder, unique(fileName, in: folder, noteName), noteName) }
        for key in directories.keys { directories[key]?.sort() }
    }

    /// Where a deleted note's folder shows now: its path in the mount, the root, or `Recovered`.
    private static func folderPath(of version: Version, _ context: VirtualContext) -> [String] {
        guard let folderName = version.folderName else { return [] }
        guard let folder = context.database.metadata(for: RecordID(recordName: folderName)), folder.recordType == Folder.recordType,
            let path = context.mountPath(folder)
        else { return [recoveredName] }
        return path
    }

    private mutating func addFolders(_ path: ArraySlice<String>) {
        var parent: [String] = []
        for name in path {
            if taken[parent, default: []].insert(name).inserted { directories[parent, default: []].append(name) }
            parent.append(name)
            if directories[parent] == nil { directories[parent] = [] }
        }
    }

    private mutating func addNote(_ folder: [String], _ name: String, _ noteName: String) {
        let path = folder + [name]
        guard notes[path] == nil, directories[path] == nil else { return }
        taken[folder, default: []].insert(name)
        directories[folder, default: []].append(name)
        notes[path] = noteName
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
