/// Chinese, Japanese and Korean text, written without spaces between words, made searchable by
/// substring: the `cjk` column of the `words` table holds the bigrams of every run of such
/// characters, and a query's run becomes the phrase of its bigrams.
///
/// A run `c1 c2 … cn` is indexed as the tokens `c1c2 c2c3 … c(n-1)cn cn`. A query run of two or
/// more characters is the phrase of its bigrams (`東京に` → `"東京 京に"`): consecutive bigrams of
/// one run overlap by a character, so the phrase matches exactly where the run holds the query as
/// a substring. The last character closes each run as a token of its own, so no phrase spans two
/// runs. One character is the prefix query `c*` (every character starts a bigram or closes a run).
/// Letters of other scripts glued to a run (`iPhone用`) are indexed in the column too, as words.
public enum CJKText {
    /// Whether `scalar` is a letter or digit of a script written without spaces (Han, kana,
    /// Hangul, Bopomofo): a punctuation mark of those scripts (`。`, `・`) is not.
    public static func isCJK(_ scalar: Unicode.Scalar) -> Bool {
        let v = scalar.value
        guard v >= 0x1100 else { return false }
        let inBlock =
            (0x1100...0x11FF).contains(v) || (0x2E80...0x2FDF).contains(v) || (0x3005...0x3007).contains(v)
            || (0x3021...0x3029).contains(v) || (0x3031...0x3035).contains(v) || (0x3038...0x303C).contains(v)
            || (0x3040...0x31FF).contains(v) || (0x3400...0x4DBF).contains(v) || (0x4E00...0x9FFF).contains(v)
            || (0xA960...0xA97F).contains(v) || (0xAC00...0xD7FF).contains(v) || (0xF900...0xFAFF).contains(v)
            || (0xFF66...0xFFDC).contains(v) || (0x20000...0x3FFFF).contains(v)
        return inBlock && isWordCharacter(scalar)
    }

    /// Whether `scalar` is part of a word (a letter, digit or private-use character), as the
    /// index's tokenizer sees it; punctuation, symbols (emoji) and spaces separate words.
    public static func isWordCharacter(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.isASCII { return scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) }
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter, .decimalNumber, .letterNumber,
            .otherNumber, .privateUse, .nonspacingMark, .spacingMark, .enclosingMark:
            return true
        default:
            return false
        }
    }

    /// Whether `text` has a word character that is not a mark (something the index finds).
    static func hasWord(_ text: Substring.UnicodeScalarView) -> Bool {
        text.contains { isWordCharacter($0) && !$0.properties.generalCategory.isMark }
    }

    /// One piece of a word: a run of CJK characters or the letters around it.
    enum Piece: Equatable {
        case run([Unicode.Scalar])
        case other(String)
    }

    /// The words of `text` (split as the tokenizer splits), each as its CJK runs and the letters
    /// between them; only the words that hold a CJK character unless `all`.
    static func pieces(_ text: String, all: Bool = false) -> [[Piece]] {
        // Scripts that use CJK characters are all above U+1100: UTF-8 lead bytes from 0xE1.
        guard all || text.utf8.contains(where: { $0 >= 0xE1 }) else { return [] }
        var words: [[Piece]] = []
        var current: [Piece] = []
        var hasRun = false
        var run: [Unicode.Scalar] = []
        var other = String.UnicodeScalarView()
        func flushPiece() {
            if !run.isEmpty { current.append(.run(run)) }
            if !other.isEmpty, hasWord(other[...]) { current.append(.other(String(other))) }
            run = []
            other = String.UnicodeScalarView()
        }
        func flushWord() {
            flushPiece()
            if hasRun || (all && !current.isEmpty) { words.append(current) }
            current = []
            hasRun = false
        }
        for scalar in text.unicodeScalars {
            if isCJK(scalar) {
                if !other.isEmpty { flushPiece() }
                run.append(scalar)
                hasRun = true
            } else if isWordCharacter(scalar) {
                if !run.isEmpty { flushPiece() }
                other.append(scalar)
            } else {
                flushWord()
            }
        }
        flushWord()
        return words
    }

    /// What the `cjk` column holds for `text`: the bigrams of its CJK runs, each run closed by
    /// its last character, and the other letters of the words that hold them; empty for text
    /// without CJK characters.
    public static func indexForm(_ text: String) -> String {
        var tokens: [String] = []
        for word in pieces(text) {
            for piece in word {
                switch piece {
                case .run(let scalars):
                    for i in scalars.indices.dropLast() { tokens.append(String(String.UnicodeScalarView(scalars[i...(i + 1)]))) }
                    if let last = scalars.last { tokens.append(String(last)) }
                case .other(let letters):
                    tokens.append(letters)
                }
            }
        }
        return tokens.joined(separator: " ")
    }

    /// The FTS5 expression for a query run (see the type's rule).
    static func expression(_ run: [Unicode.Scalar]) -> String {
        if run.count == 1 { return "cjk : \"\(String(run[0]))\" *" }
        let bigrams = run.indices.dropLast().map { String(String.UnicodeScalarView(run[$0...($0 + 1)])) }
        return "cjk : \"" + bigrams.joined(separator: " ") + "\""
    }
}

extension Unicode.GeneralCategory {
    var isMark: Bool { self == .nonspacingMark || self == .spacingMark || self == .enclosingMark }
}
