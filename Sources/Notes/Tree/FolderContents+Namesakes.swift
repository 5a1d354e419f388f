import Foundation
import RecordStore

/// One record's entry named from its namesakes alone: what a command that prints a few records'
/// paths (`query`, `search`) reads instead of listing every folder they are in.
extension FolderContents {
    /// The entry of `metadata` when its folder's other records cannot change its file name, told
    /// from the records of that folder whose stored name would show as the same file name; nil
    /// when unsure (then list the folder: ``children(of:)``).
    ///
    /// By ``EntryNames``' rules a record whose base name (rule 1 and 2) is contested by no record
    /// created before it shows as that name: suffixed names are given only to the later records
    /// and never take a name a record keeps. So it is enough to find the records whose base name
    /// equals this one's, which the store finds by name and folder (one indexed query per record
    /// type). Where a base name can come from another stored name (the escapes of `/` and NUL, an
    /// empty name shown as `Untitled`, `.` and `..`, a name cut to fit 255 bytes), or for the root
    /// and `Recovered` (placed by the folder tree, not by one reference), the answer is nil.
    func uncontestedEntry(_ metadata: RecordMetadata) -> FolderEntry? {
        guard let kind = EntryNames.kind(ofRecordType: metadata.recordType), let folder = shownFolder(of: metadata),
            folder != Self.recoveredID, tree.contains(folder)
        else { return nil }
        let name = Self.storedName(of: metadata, in: database)
        let base = EntryNames.baseName(name, kind: kind)
        let suffix = kind == .note ? EntryNames.noteExtension : ""
        guard base == name + suffix, base.utf8.count < 240, !Self.mayShowAsAnotherName(name) else { return nil }
        // Stored names that show as `base`: a note's title without `.md`, anything else's name.
        var namesakes: [RecordMetadata] = []
        for type in [Folder.recordType] + FolderTree.itemTypes {
            guard let otherKind = EntryNames.kind(ofRecordType: type) else { continue }
            let stored: String
            if otherKind == .note {
                guard EntryNames.isNoteFileName(base) else { continue }
                stored = String(base.dropLast(EntryNames.noteExtension.count))
            } else {
                stored = base
            }
            namesakes += database.metadata(
                ofType: type, whereField: Self.nameKey(otherKind), equals: stored, referringTo: folder, through: Self.parentKey(otherKind))
        }
        namesakes.removeAll { shownFolder(of: $0) != folder }
        guard namesakes.contains(where: { $0.recordID == metadata.recordID }) else { return nil }
        let first = namesakes.min { a, b in
            let (da, db) = (Self.namingDate(of: a), Self.namingDate(of: b))
            if da != db { return da < db }
            return a.recordID.recordName.utf8.lexicographicallyPrecedes(b.recordID.recordName.utf8)
        }
        guard first?.recordID == metadata.recordID, let prefix = try? folderPath(folder) else { return nil }
        return FolderEntry(kind: kind, metadata: metadata, name: name, fileName: base, parent: folder, path: prefix + "/" + base)
    }

    /// Whether another stored name may show as the same file name as `name`: it holds an escape's
    /// character (`∕`, `␀`), or it is a name given to names that cannot show as themselves.
    static func mayShowAsAnotherName(_ name: String) -> Bool {
        name.isEmpty || name.contains("\u{2215}") || name.contains("\u{2400}")
            || [EntryNames.untitled, EntryNames.untitled + EntryNames.noteExtension, "\u{2024}", "\u{2025}"].contains(name)
    }
}
