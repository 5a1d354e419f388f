/// `#tag` and `#nested/tag`.
extension NoteTextScanner {
    /// A tag name longer than this (in UTF-8 bytes) is no tag.
    static let maximumTagBytes = 512

    /// The `#` at `hash`: records the tag it opens, if any. Returns where scanning goes on.
    mutating func tag(at hash: Int) -> Int {
        guard tagMayStart(at: hash) else { return hash + 1 }
        let nameStart = hash + 1
        var index = nameStart
        var firstNonDigit = Int.max
        while index - nameStart <= Self.maximumTagBytes, let (scalar, length) = MarkdownByte.scalar(at: index, in: bytes) {
            guard let isDigit = Self.tagCharacterIsDigit(scalar) else { break }
            if !isDigit && firstNonDigit == Int.max { firstNonDigit = index }
            index += length
        }
        // Too long: no tag, and no tag starts inside the run (a `#` after a name character opens none).
        guard index - nameStart <= Self.maximumTagBytes else { return index }
        var nameEnd = index
        while nameEnd > nameStart && bytes[nameEnd - 1] == MarkdownByte.slash { nameEnd -= 1 }
        guard firstNonDigit < nameEnd else { return index }  // `#123` and `#1/` are no tags
        let line = lines.line(at: hash, in: bytes)
        tags.append(NoteTag(name: text(nameStart..<nameEnd), range: nameStart..<nameEnd, inFrontMatter: false, line: line))
        return index
    }

    /// Whether a `#` at `hash` may open a tag: at the start of a line, or after whitespace or one
    /// of `( [ { , ; " ' * ~ > |`.
    private func tagMayStart(at hash: Int) -> Bool {
        guard hash > 0 else { return true }
        let previous = bytes[hash - 1]
        switch previous {
        case MarkdownByte.newline, MarkdownByte.carriageReturn, MarkdownByte.space, MarkdownByte.tab:
            return true
        case UInt8(ascii: "("), UInt8(ascii: "["), UInt8(ascii: "{"), UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "\""),
            UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "~"), UInt8(ascii: ">"), UInt8(ascii: "|"):
            return true
        case 0x80...:
            return MarkdownByte.scalar(before: hash, in: bytes)?.properties.isWhitespace ?? false
        default:
            return false
        }
    }

    /// Whether a scalar may be part of a tag name (letters, combining marks, decimal digits, `_`,
    /// `-`, `/`): nil when not, otherwise whether it is a digit.
    private static func tagCharacterIsDigit(_ scalar: Unicode.Scalar) -> Bool? {
        if scalar.isASCII {
            let byte = UInt8(scalar.value)
            if MarkdownByte.isASCIIDigit(byte) { return true }
            let isNameByte =
                MarkdownByte.isASCIILetter(byte) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-") || byte == MarkdownByte.slash
            return isNameByte ? false : nil
        }
        switch scalar.properties.generalCategory {
        case .decimalNumber:
            return true
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter, .nonspacingMark, .spacingMark,
            .enclosingMark:
            return false
        default:
            return nil
        }
    }
}
