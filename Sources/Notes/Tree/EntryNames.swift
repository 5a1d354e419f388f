import Foundation

/// How records show as file names inside one folder: the rules the mount and the CLI share.
///
/// DESIGN.md §4. Depends only on the Swift standard library and `Date`, so the mount can use the
/// same file (it belongs in `Notes`; see the CLI issue's report).
///
/// 1. A note shows as `Title.md`; a folder and an attachment show as their name.
/// 2. In a name, `/` shows as `∕` (U+2215 DIVISION SLASH) and NUL as `␀` (U+2400); an empty title or
///    name shows as `Untitled`; a folder or attachment named `.` or `..` shows as `․` or `‥`
///    (U+2024, U+2025), since those names are taken by the directory itself.
/// 3. Names are compared as Unicode text (canonical equivalence): `é` and `e` + U+0301 are the
///    same name, which one record keeps (rule 4), though the kernel would tell their bytes apart.
/// 4. When several records of one folder would show the same name, the earliest created
///    (`creationDate`, then `recordName`) keeps it; each other gets ` (xxxxxx)` before a trailing
///    `.md` (at the end when there is none), made of the first 6 characters of its `recordName`
///    lowercased with everything but ASCII letters and digits dropped. If that is still taken, the
///    suffix grows (8, 12, then every such character, then a counter).
public enum EntryNames {
    /// What a directory entry is.
    public enum Kind: Sendable, Hashable {
        case folder, note, attachment
        /// `Symlink`, `SpecialFile` (FIFO, socket, device) and `Link` (a hard link) records: named
        /// as attachments are.
        case symlink, special, link
    }

    /// A record to be named: its kind, stored name (folder `name`, note `title`, attachment `name`)
    /// and what decides who keeps a contested name.
    public struct Candidate: Sendable, Hashable {
        public var recordName: String
        public var kind: Kind
        public var name: String
        public var creationDate: Date?

        public init(recordName: String, kind: Kind, name: String, creationDate: Date?) {
            self.recordName = recordName
            self.kind = kind
            self.name = name
            self.creationDate = creationDate
        }
    }

    public static let untitled = "Untitled"
    public static let noteExtension = ".md"

    /// The file name of one record before de-duplication (rules 1 and 2).
    public static func baseName(_ name: String, kind: Kind) -> String {
        var shown = escaped(name)
        if shown.isEmpty { shown = untitled }
        switch kind {
        case .note: return fit(shown, reserving: noteExtension.utf8.count) + noteExtension
        case .folder, .attachment, .symlink, .special, .link:
            if shown == "." { return "\u{2024}" }
            if shown == ".." { return "\u{2025}" }
            return fit(shown, reserving: 0)
        }
    }

    /// File names are at most this many bytes (NAME_MAX).
    public static let maximumNameLength = 255

    /// The kind of entry a record type shows as; nil for types the mount does not show.
    public static func kind(ofRecordType recordType: String) -> Kind? {
        switch recordType {
        case "Folder": .folder
        case "Note": .note
        case "Attachment": .attachment
        case "Symlink": .symlink
        case "SpecialFile": .special
        case "Link": .link
        default: nil
        }
    }

    /// Whether a file name names a note (`*.md`, with something before the extension).
    public static func isNoteFileName(_ name: String) -> Bool {
        name.hasSuffix(noteExtension) && name.utf8.count > noteExtension.utf8.count
    }

    /// Cuts `text` on a character boundary so that it and `reserved` more bytes fit in a file name.
    static func fit(_ text: String, reserving reserved: Int) -> String {
        let budget = maximumNameLength - reserved
        guard text.utf8.count > budget else { return text }
        var bytes = 0
        var end = text.startIndex
        for index in text.indices {
            let size = text[index].utf8.count
            if bytes + size > budget { break }
            bytes += size
            end = text.index(after: index)
        }
        return String(text[..<end])
    }

    /// The stored title for a note file name: without `.md`, `∕` back to `/` (the inverse of
    /// ``baseName(_:kind:)`` for the names it produces, `Untitled.md` aside).
    public static func title(fromFileName fileName: String) -> String {
        var title = fileName
        if title.hasSuffix(noteExtension) { title.removeLast(noteExtension.count) }
        return unescaped(title)
    }

    /// The stored name for a folder or attachment file name (`∕` back to `/`).
    public static func name(fromFileName fileName: String) -> String { unescaped(fileName) }

    /// A stored name as a file name: `/` as `∕` (U+2215), NUL as `␀` (U+2400). Names with neither
    /// (nearly all) skip Foundation's search, which is a noticeable part of a create's cost.
    static func escaped(_ name: String) -> String {
        guard name.utf8.contains(where: { $0 == UInt8(ascii: "/") || $0 == 0 }) else { return name }
        return name.replacingOccurrences(of: "/", with: "\u{2215}").replacingOccurrences(of: "\u{0}", with: "\u{2400}")
    }

    /// A file name as a stored name (the reverse of ``escaped(_:)``). Both escapes start with the
    /// UTF-8 byte 0xE2, so names without it are returned as they are.
    static func unescaped(_ fileName: String) -> String {
        guard fileName.utf8.contains(0xE2) else { return fileName }
        return fileName.replacingOccurrences(of: "\u{2215}", with: "/").replacingOccurrences(of: "\u{2400}", with: "\u{0}")
    }

    /// The suffix characters of a record name: lowercased ASCII letters and digits, in order.
    public static func suffixCharacters(_ recordName: String) -> String {
        String(
            recordName.lowercased().unicodeScalars.filter { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0)) }.map(
                Character.init))
    }

    /// Inserts ` (suffix)` before a trailing `.md`, or at the end.
    public static func suffixed(_ base: String, _ suffix: String) -> String {
        let tag = " (\(suffix))"
        if base.hasSuffix(noteExtension), base.count > noteExtension.count {
            let stem = String(base.dropLast(noteExtension.count))
            return fit(stem, reserving: tag.utf8.count + noteExtension.utf8.count) + tag + noteExtension
        }
        return fit(base, reserving: tag.utf8.count) + tag
    }

    /// The file names of all entries of one folder, unique as Unicode text (rule 3), in the order given.
    public static func assign(_ candidates: [Candidate]) -> [String] {
        let bases = candidates.map { baseName($0.name, kind: $0.kind) }
        let order = candidates.indices.sorted { a, b in
            let da = candidates[a].creationDate ?? .distantFuture
            let db = candidates[b].creationDate ?? .distantFuture
            if da != db { return da < db }
            return candidates[a].recordName.precedesInByteOrder(candidates[b].recordName)
        }
        var names = bases
        var taken = Set<String>()  // String equality is canonical equivalence (rule 3)
        var losers: [Int] = []
        for index in order {
            if taken.insert(bases[index]).inserted { continue }
            losers.append(index)
        }
        // Names of winners are fixed first, so a suffixed name never takes a winner's name.
        for index in losers {
            let characters = suffixCharacters(candidates[index].recordName)
            var lengths = [6, 8, 12].filter { $0 < characters.count } + [characters.count]
            lengths = lengths.filter { $0 > 0 }
            var chosen: String?
            for length in lengths {
                let name = suffixed(bases[index], String(characters.prefix(length)))
                if taken.insert(name).inserted {
                    chosen = name
                    break
                }
            }
            var counter = 2
            while chosen == nil {
                let name = suffixed(bases[index], (characters.isEmpty ? "" : characters + "-") + String(counter))
                if taken.insert(name).inserted { chosen = name }
                counter += 1
            }
            names[index] = chosen ?? bases[index]  // never nil: the loop above ends only with a name
        }
        return names
    }
}
