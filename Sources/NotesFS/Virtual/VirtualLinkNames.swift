import Notes

/// How the links of a virtual directory are named, and where they point.
///
/// 1. A link is named as its record's file is named in the mount (`Note.md`, with the collision
///    suffix its folder gave it, `Note (1a2b3c).md`).
/// 2. When links to records of different folders would share a name, each one not at the root
///    takes its folder's path as a suffix, the path's `/` shown as `∕` (U+2215):
///    `Note (Work).md`, `Note (Work∕2024).md`; the root's keeps the plain name. A path too long
///    for the name gives way to the first characters of the record name (`Note (1a2b3c).md`).
/// 3. A name still taken by a better-ranked link takes the record-name suffix, then a counter.
/// 4. The target is relative, up to the mount's root and down to the file: from `.recent/` it is
///    `../Work/Note.md`, from `.search/QUERY/` `../../Work/Note.md`.
enum VirtualLinkNames {
    /// A record to link to: its record name and its path in the mount (folders, then its file name).
    struct Hit: Sendable, Hashable {
        var recordName: String
        var path: [String]
    }

    /// A folder path longer than this many bytes is not put into a link's name (rule 2).
    static let maximumFolderSuffixLength = 96

    /// The names of `hits`' links, unique byte for byte, in the order given (best first).
    static func names(_ hits: [Hit]) -> [String] {
        var sharing: [String: Int] = [:]
        for hit in hits { sharing[hit.path.last ?? "", default: 0] += 1 }
        var taken = Set<[UInt8]>()
        var names: [String] = []
        for hit in hits {
            let fileName = hit.path.last ?? ""
            var name = fileName
            if sharing[fileName, default: 0] > 1, hit.path.count > 1 {
                let folders = hit.path.dropLast().joined(separator: "\u{2215}")
                let suffix =
                    folders.utf8.count <= maximumFolderSuffixLength
                    ? folders : String(EntryNames.suffixCharacters(hit.recordName).prefix(6))
                name = EntryNames.suffixed(fileName, suffix)
            }
            if !taken.insert(Array(name.utf8)).inserted {
                name = unique(fileName, hit.recordName, &taken)
            }
            names.append(name)
        }
        return names
    }

    /// `base` with the record-name suffix, then a counter, until it is free.
    private static func unique(_ base: String, _ recordName: String, _ taken: inout Set<[UInt8]>) -> String {
        let characters = EntryNames.suffixCharacters(recordName)
        for length in [6, 8, 12, characters.count] where length <= characters.count && length > 0 {
            let name = EntryNames.suffixed(base, String(characters.prefix(length)))
            if taken.insert(Array(name.utf8)).inserted { return name }
        }
        var counter = 2
        while true {
            let name = EntryNames.suffixed(base, (characters.isEmpty ? "" : characters + "-") + String(counter))
            if taken.insert(Array(name.utf8)).inserted { return name }
            counter += 1
        }
    }

    /// The target of a link in a virtual directory `depth` levels below the root to `path`.
    static func target(depth: Int, path: [String]) -> [UInt8] {
        Array((Array(repeating: "..", count: depth) + path).joined(separator: "/").utf8)
    }
}
