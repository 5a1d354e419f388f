/// The entries of a front matter's `tags:` (or `tag:`): one per list item, or a scalar split at
/// commas and blanks; one leading `#` removed, empty entries dropped.
enum FrontMatterTags {
    struct Entry {
        /// The entry without its `#`: what the property's list holds.
        var name: String
        /// The entry as a tag, when it is a tag name whose bytes in the note are known.
        var tag: NoteTag?
    }

    static func entries(_ segments: [FrontMatterSegment], splitting: Bool) -> [Entry] {
        var entries: [Entry] = []
        for segment in segments {
            guard splitting else {
                if let entry = entry(segment.text, segment.isVerbatim ? segment.range : nil, line: segment.line) { entries.append(entry) }
                continue
            }
            let utf8 = Array(segment.text.utf8)
            var start = 0
            for end in 0...utf8.count where end == utf8.count || isSeparator(utf8[end]) {
                if end > start {
                    let text = String(decoding: utf8[start..<end], as: UTF8.self)
                    let range = segment.isVerbatim ? segment.range.lowerBound + start..<segment.range.lowerBound + end : nil
                    if let entry = entry(text, range, line: segment.line) { entries.append(entry) }
                }
                start = end + 1
            }
        }
        return entries
    }

    /// Letters, digits, `_`, `-` and `/`, as in a `#tag` of the text.
    static func isTagName(_ name: String) -> Bool {
        !name.isEmpty && name.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" || $0 == "/" }
    }

    private static func entry(_ text: String, _ range: Range<Int>?, line: Int) -> Entry? {
        let name = text.hasPrefix("#") ? String(text.dropFirst()) : text
        guard !name.isEmpty else { return nil }
        let tag = range.flatMap { range in
            isTagName(name)
                ? NoteTag(name: name, range: range.upperBound - name.utf8.count..<range.upperBound, inFrontMatter: true, line: line) : nil
        }
        return Entry(name: name, tag: tag)
    }

    private static func isSeparator(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: ",") || byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
    }
}
