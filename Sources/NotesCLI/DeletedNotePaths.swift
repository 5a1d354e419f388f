import Foundation
import Notes
import RecordStore

/// The paths `log` prints for deleted notes, which `note undelete` takes back: the path the note
/// had (its folder's path now; when the folder is gone too, the folder names its delete kept,
/// else `Recovered`), and, when two deleted notes would print one path, each with the mount's
/// record-name suffix (`Same (1a2b3c).md`). Every path is printed for one note only.
struct DeletedNotePaths {
    /// The path of each deleted note, by its record name.
    private(set) var paths: [String: String] = [:]
    /// The path each had before any suffix, by its record name.
    private var basePaths: [String: String] = [:]

    /// The paths of `deleted` (the last version of each deleted note, as
    /// ``VersionHistory/deletedNotes(in:since:folder:)`` lists them).
    init(_ deleted: [Version], contents: FolderContents) {
        var byPath: [String: [Version]] = [:]
        for version in deleted {
            let path = Self.basePath(version, contents: contents)
            basePaths[version.noteName] = path
            byPath[path, default: []].append(version)
        }
        for (path, versions) in byPath {
            guard versions.count > 1 else {
                paths[versions[0].noteName] = path
                continue
            }
            // Record names differ: suffixes of 6 characters, longer where those are equal.
            let characters = versions.map { EntryNames.suffixCharacters($0.noteName) }
            var length = 6
            while length < characters.map(\.count).max() ?? 0, Set(characters.map { $0.prefix(length) }).count < versions.count {
                length += 6
            }
            for (version, suffix) in zip(versions, characters) {
                paths[version.noteName] = EntryNames.suffixed(path, String(suffix.prefix(length)))
            }
        }
    }

    /// The path of the deleted note `noteName`; nil for a note that is not deleted.
    func path(ofNoteNamed noteName: String) -> String? { paths[noteName] }

    /// The deleted note `argument` names: a path as printed (a note's without `.md` too), also
    /// with a suffix printed while another deleted note shared its path (undeleted since).
    func note(at argument: String) -> String? {
        let components = FolderContents.components(argument).joined(separator: "/")
        let asked = [components, components + EntryNames.noteExtension]
        if let exact = paths.first(where: { asked.contains($0.value) }) { return exact.key }
        return basePaths.first { name, base in
            let characters = EntryNames.suffixCharacters(name)
            return stride(from: 6, through: characters.count + 5, by: 6).contains { length in
                asked.contains(EntryNames.suffixed(base, String(characters.prefix(length))))
            }
        }?.key
    }

    /// The path the note had, before any suffix.
    static func basePath(_ version: Version, contents: FolderContents) -> String {
        let fileName = EntryNames.baseName(version.title, kind: version.noteType == Note.recordType ? .note : .attachment)
        guard let folder = version.folderName else { return fileName }
        if let path = try? contents.folderPath(RecordID(recordName: folder)) { return path + "/" + fileName }
        if let names = version.folderNames, !names.isEmpty {
            return names.map { EntryNames.baseName($0, kind: .folder) }.joined(separator: "/") + "/" + fileName
        }
        return "Recovered/" + fileName
    }
}
