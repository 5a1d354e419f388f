import Foundation
import RecordStore

/// How records are named as files, the one rule shared by the mount and the CLI.
///
/// - A note is `Title.md`; a folder is its name; an attachment is its name.
/// - `/` in a title or name shows as `∕` (U+2215), NUL as `␀` (U+2400); an empty title or name as
///   `Untitled`; `.` and `..` as `Untitled.` / `Untitled..`.
/// - When several records in one folder would show the same name, the earliest created (then the
///   smallest record name) keeps it; each other gets ` (xxxxxx)` before the extension (`.md` for
///   notes, the last `.ext` for attachments, at the end for folders), `xxxxxx` being the first six
///   letters and digits of its record name, lowercased.
/// - A name longer than 255 bytes is cut (on a character boundary) to fit.
public enum EntryNames {
    public static let noteExtension = ".md"
    public static let maximumNameLength = 255

    /// The file name of a record before collisions are resolved.
    public static func baseName(recordType: String, title: String) -> String {
        let shown = displayText(title)
        return recordType == Note.recordType ? fit(shown, suffix: "", extension: noteExtension) : fit(shown, suffix: "", extension: "")
    }

    /// The name with a collision suffix for `recordName`.
    public static func suffixedName(recordType: String, title: String, recordName: String) -> String {
        let shown = displayText(title)
        let tag = " (" + suffix(for: recordName) + ")"
        switch recordType {
        case Note.recordType:
            return fit(shown, suffix: tag, extension: noteExtension)
        case Folder.recordType:
            return fit(shown, suffix: tag, extension: "")
        default:
            if let dot = shown.lastIndex(of: "."), dot != shown.startIndex {
                return fit(String(shown[..<dot]), suffix: tag, extension: String(shown[dot...]))
            }
            return fit(shown, suffix: tag, extension: "")
        }
    }

    /// The six-character collision suffix of a record name.
    public static func suffix(for recordName: String) -> String {
        let letters = recordName.lowercased().unicodeScalars.filter { ("a"..."z").contains($0) || ("0"..."9").contains($0) }
        let text = String(String.UnicodeScalarView(letters.prefix(6)))
        return text.isEmpty ? "x" : text
    }

    /// Title/name as shown in a file name (without extension or suffix).
    public static func displayText(_ title: String) -> String {
        var shown = title.replacingOccurrences(of: "/", with: "\u{2215}").replacingOccurrences(of: "\u{0}", with: "\u{2400}")
        if shown.isEmpty { shown = "Untitled" }
        if shown == "." || shown == ".." { shown = "Untitled" + shown }
        return shown
    }

    /// The title a file name stands for (the reverse of ``displayText(_:)``), without `.md`.
    public static func title(fromFileName name: String) -> String {
        var text = name
        if text.hasSuffix(noteExtension) { text.removeLast(noteExtension.count) }
        return text.replacingOccurrences(of: "\u{2215}", with: "/")
    }

    /// A folder or attachment name from a file name.
    public static func name(fromFileName name: String) -> String {
        name.replacingOccurrences(of: "\u{2215}", with: "/")
    }

    /// Whether a file name is a note's (`*.md`).
    public static func isNoteFileName(_ name: String) -> Bool {
        name.hasSuffix(noteExtension) && name.count > noteExtension.count
    }

    /// `stem + suffix + ext`, cutting `stem` so that the whole fits in 255 bytes.
    static func fit(_ stem: String, suffix: String, extension ext: String) -> String {
        let budget = maximumNameLength - suffix.utf8.count - ext.utf8.count
        var cut = stem
        if cut.utf8.count > budget {
            var bytes = 0
            var end = cut.startIndex
            for index in cut.indices {
                let size = cut[index].utf8.count
                if bytes + size > budget { break }
                bytes += size
                end = cut.index(after: index)
            }
            cut = String(cut[..<end])
        }
        return cut + suffix + ext
    }

    /// Resolves the names of records that share one directory: returns each record's file name.
    ///
    /// `members` are (recordName, recordType, title, creationDate).
    public static func resolve(_ members: [(recordName: String, recordType: String, title: String, created: Date)]) -> [String: String] {
        var groups: [String: [(recordName: String, recordType: String, title: String, created: Date)]] = [:]
        for member in members {
            groups[baseName(recordType: member.recordType, title: member.title), default: []].append(member)
        }
        var names: [String: String] = [:]
        for (base, group) in groups {
            let ordered = group.sorted { ($0.created, $0.recordName) < ($1.created, $1.recordName) }
            names[ordered[0].recordName] = base
            for member in ordered.dropFirst() {
                names[member.recordName] = suffixedName(recordType: member.recordType, title: member.title, recordName: member.recordName)
            }
        }
        return names
    }
}
