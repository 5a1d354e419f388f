import Notes
import RecordStore

/// Names printed unambiguously: a name holding a character that cannot be printed (a newline, a
/// tab, any other control character, a line separator, an unassigned code point) is written in
/// the shell-escape form GNU `ls` uses on a terminal (`--quoting-style=shell-escape`, UTF-8
/// locale), which a shell reads back as the same name: `a<newline>b` prints as `'a'$'\n''b'`.
/// Other names print as they are (as `ls` does into a pipe), so ordinary output stays plain.
enum ShellQuoting {
    /// A name as printed in listings: quoted only when it holds an unprintable character.
    static func shown(_ name: String) -> String {
        needsQuoting(name) ? quoted(name) : name
    }

    /// Whether `name` holds a character that cannot be printed (so ``shown(_:)`` quotes it).
    static func needsQuoting(_ name: String) -> Bool {
        !name.unicodeScalars.allSatisfy(isPrintable)
    }

    /// Each entry's path as ``shown(_:)`` prints it, looking at each name once: a path needs
    /// quoting when its folder's path (an earlier entry) or its own name does. Listing a deep tree
    /// so costs the length of its names, not of its paths.
    static func shownPaths(_ entries: [FolderEntry]) -> [String] {
        var folderNeedsQuoting: [RecordID: Bool] = [:]
        return entries.map { entry in
            let needs =
                if let parent = entry.parent, let above = folderNeedsQuoting[parent] {
                    above || needsQuoting(entry.fileName)
                } else {
                    needsQuoting(entry.path)
                }
            if entry.kind == .folder { folderNeedsQuoting[entry.recordID] = needs }
            return needs ? quoted(entry.path) : entry.path
        }
    }

    /// Whether glibc's `iswprint` holds for `scalar` (what `ls` prints raw): not a control
    /// character, line or paragraph separator, surrogate or unassigned code point.
    static func isPrintable(_ scalar: Unicode.Scalar) -> Bool {
        // ASCII without a look in the Unicode tables (3% of a `query` that prints 1,000 paths):
        // its controls are C0 and DEL, everything else prints.
        if scalar.isASCII { return scalar.value >= 0x20 && scalar.value != 0x7F }
        return switch scalar.properties.generalCategory {
        case .control, .lineSeparator, .paragraphSeparator, .surrogate, .unassigned: false
        default: true
        }
    }

    /// GNU's shell-escape quoting of the whole name: single quotes around printable runs, `\''`
    /// for a quote, `$'…'` around unprintable runs (C escapes, else octal UTF-8 bytes).
    static func quoted(_ name: String) -> String {
        var out = "'"
        var inDollar = false
        for scalar in name.unicodeScalars {
            if !isPrintable(scalar) {
                if !inDollar { out += "'$'" }
                inDollar = true
                out += escape(scalar)
            } else if scalar == "'" {
                out += "'\\''"  // closes either kind of quote, an escaped quote, reopens '…'
                inDollar = false
            } else {
                if inDollar { out += "''" }
                inDollar = false
                out.unicodeScalars.append(scalar)
            }
        }
        return out + "'"
    }

    private static func escape(_ scalar: Unicode.Scalar) -> String {
        switch scalar.value {
        case 0x07: return "\\a"
        case 0x08: return "\\b"
        case 0x09: return "\\t"
        case 0x0A: return "\\n"
        case 0x0B: return "\\v"
        case 0x0C: return "\\f"
        case 0x0D: return "\\r"
        default:
            return String(scalar).utf8.map { byte in
                "\\" + String(byte >> 6) + String((byte >> 3) & 7) + String(byte & 7)
            }.joined()
        }
    }
}
