import Foundation
import RecordStore

/// One record's entry named from its namesakes alone: what a command that prints a few records'
/// paths (`query`) or follows one path (`note cat F/N.md`) reads instead of listing every folder
/// on the way.
extension FolderContents {
    /// The entry of `metadata` when its folder's other records cannot change its file name, told
    /// from the records of that folder whose stored name would show as the same file name; nil
    /// when unsure (then list the folder: ``children(of:)``).
    ///
    /// By ``EntryNames``' rules a record whose base name (rules 1 and 2) is contested by no record
    /// created before it shows as that name: suffixed names are given only to the later records
    /// and never take a name a record keeps. So it is enough to find the records whose base name
    /// equals this one's, which the store finds by name and folder (one indexed query per record
    /// type). Where a base name can come from another stored name (the escapes of `/` and NUL, an
    /// empty name shown as `Untitled`, `.` and `..`, a name cut to fit 255 bytes), and in
    /// `Recovered` (placed by the folder tree, not by one reference), the answer is nil.
    func uncontestedEntry(_ metadata: RecordMetadata) -> FolderEntry? {
        guard let kind = EntryNames.kind(ofRecordType: metadata.recordType), let placement = placement(of: metadata) else {
            return nil
        }
        let folder: RecordID?
        switch placement {
        case .root: folder = nil
        case .folder(let id): folder = id
        case .recovered: return nil
        }
        let name = Self.storedName(of: metadata, in: database)
        let base = EntryNames.baseName(name, kind: kind)
        guard base == name + (kind == .note ? EntryNames.noteExtension : ""), let namesakes = namesakes(showingAs: base, in: folder),
            namesakes.contains(where: { $0.recordID == metadata.recordID })
        else { return nil }
        let first = namesakes.min { a, b in
            let (da, db) = (Self.namingDate(of: a), Self.namingDate(of: b))
            if da != db { return da < db }
            return a.recordID.recordName.precedesInByteOrder(b.recordID.recordName)
        }
        guard first?.recordID == metadata.recordID else { return nil }
        guard let folder else { return FolderEntry(kind: kind, metadata: metadata, name: name, fileName: base, parent: nil, path: base) }
        guard let prefix = try? folderPath(folder) else { return nil }
        return FolderEntry(kind: kind, metadata: metadata, name: name, fileName: base, parent: folder, path: prefix + "/" + base)
    }

    /// The entry `folder` (nil: the root) shows as `fileName` (its bytes), found from the records
    /// whose stored name shows as that name; nil when unsure (a suffixed or escaped name, a name
    /// no record holds): then list the folder.
    func uncontestedChild(named fileName: String, in folder: RecordID?) -> FolderEntry? {
        guard folder != Self.recoveredID, let namesakes = namesakes(showingAs: fileName, in: folder) else { return nil }
        let bytes = Array(fileName.utf8)
        for metadata in namesakes {
            if let entry = uncontestedEntry(metadata), Array(entry.fileName.utf8) == bytes { return entry }
        }
        return nil
    }

    /// The records `folder` (nil: the root) shows whose stored name shows as `base` before any
    /// suffix: notes titled `base` without `.md`, anything else named `base`. Nil when `base` may
    /// also be shown for other stored names (see ``mayShowAsAnotherName(_:)``), and for the
    /// root's `Recovered`, which the virtual folder may hold.
    func namesakes(showingAs base: String, in folder: RecordID?) -> [RecordMetadata]? {
        guard keepsNamesakes else { return lookUpNamesakes(showingAs: base, in: folder) }
        if let kept = keptNamesakes[folder]?[base] { return kept }
        let found = lookUpNamesakes(showingAs: base, in: folder)
        keptNamesakes[folder, default: [:]][base] = .some(found)
        return found
    }

    /// ``namesakes(showingAs:in:)`` read from the store.
    private func lookUpNamesakes(showingAs base: String, in folder: RecordID?) -> [RecordMetadata]? {
        guard base.utf8.count < 240, !Self.mayShowAsAnotherName(base) else { return nil }
        if folder == nil && base == FolderTree.recoveredName { return nil }
        if let folder, placement(ofFolder: folder) == nil { return nil }
        var found: [RecordMetadata] = []
        for type in [Folder.recordType] + FolderTree.itemTypes {
            guard let kind = EntryNames.kind(ofRecordType: type) else { continue }
            let stored: String
            if kind == .note {
                guard EntryNames.isNoteFileName(base) else { continue }
                stored = String(base.dropLast(EntryNames.noteExtension.count))
                guard !Self.mayShowAsAnotherName(stored) else { return nil }
            } else {
                stored = base
            }
            found += database.metadata(
                ofType: type, whereField: Self.nameKey(kind), equals: stored, referringTo: folder, through: Self.parentKey(kind))
        }
        return found.filter { shownFolder(of: $0) == folder }
    }

    /// Whether another stored name may show as the same file name as `name`: it holds an escape's
    /// character (`∕`, `␀`), or it is a name given to names that cannot show as themselves.
    static func mayShowAsAnotherName(_ name: String) -> Bool {
        if name.isEmpty || name == EntryNames.untitled || name == EntryNames.untitled + EntryNames.noteExtension { return true }
        // An ASCII name holds no escape's character and is none of the dot leaders (`String.contains`
        // with Foundation imported is its `range(of:)`: 8.5% of the text indexer's namesake lookups).
        if name.isASCII { return false }
        return name.contains("\u{2215}") || name.contains("\u{2400}") || ["\u{2024}", "\u{2025}"].contains(name)
    }
}
