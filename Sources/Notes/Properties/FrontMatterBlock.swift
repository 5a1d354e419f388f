import Foundation

/// Where a note's front matter is: a first line that is exactly `---`, up to the next line that is
/// exactly `---` or `...` (a trailing `\r` and spaces allowed on both). The one rule the property
/// parser and the link and tag scanner share: what is inside is YAML, not text.
public enum FrontMatterBlock {
    /// Front matter longer than this is not read as properties (it stays text of the note, and
    /// `fsck` says why): a bound on what one note can cost every index update.
    public static let maximumBytes = 1 << 20

    /// The byte ranges of the whole block (both fence lines and their line ends included) and of
    /// the YAML between the fences; nil when the text has no front matter.
    public static func ranges(in text: String) -> (block: Range<Int>, yaml: Range<Int>)? {
        // Most notes have none: told by their first bytes, without copying up to a megabyte first.
        guard text.utf8.starts(with: "---".utf8) else { return nil }
        let bytes = Array(text.utf8.prefix(maximumBytes + 8))
        guard let first = line(in: bytes, from: 0), isFence(bytes[first.content], closing: false) else { return nil }
        var start = first.next
        while start < bytes.count, let current = line(in: bytes, from: start) {
            if isFence(bytes[current.content], closing: true) { return (0..<current.next, first.next..<start) }
            start = current.next
        }
        return nil
    }

    /// The line that starts at `start`: its content (without `\n`) and where the next one starts.
    private static func line(in bytes: [UInt8], from start: Int) -> (content: Range<Int>, next: Int)? {
        guard start < bytes.count else { return nil }
        var end = start
        while end < bytes.count, bytes[end] != UInt8(ascii: "\n") { end += 1 }
        return (start..<end, end < bytes.count ? end + 1 : end)
    }

    private static func isFence(_ line: ArraySlice<UInt8>, closing: Bool) -> Bool {
        var trimmed = line
        while let last = trimmed.last, last == UInt8(ascii: "\r") || last == UInt8(ascii: " ") || last == UInt8(ascii: "\t") {
            trimmed.removeLast()
        }
        return trimmed.elementsEqual("---".utf8) || (closing && trimmed.elementsEqual("...".utf8))
    }
}
