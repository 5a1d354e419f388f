import Foundation
import TestSupport
import Testing

@testable import RecordStore

/// The query's raw-bytes prefilter (``RawFilePrefilter``) must never change a result: every
/// query here is checked against a plain evaluation of every record, read whole.
@Suite struct QueryPrefilterTests {
    /// Text long enough to be a large field (kept out of the index: read from the record file).
    static let filler = String(repeating: "lorem ipsum dolor sit amet ", count: 12)

    static let texts: [String: String] = [
        "plain": "a Zanzibar note " + filler,
        "upper": filler + "ZANZIBAR",
        "lower-only": filler + "zanzibar",
        "quoted": filler + "she said \"zanzibar\" twice",
        "backslash": filler + #"C:\temp\zanzibar\x and a \" lone"#,
        "newline-split": filler + "zan\nzibar and tab\tend",
        "kelvin": "\u{212A}elvin first " + filler,
        "kelvin-start": "\u{212A}" + filler,
        "long-s": filler + "a \u{17F}tar is born",
        "ligature": filler + "the \u{FB01}le is here",
        "sharp-s": filler + "die Stra\u{DF}e",
        "accented": filler + "caf\u{E9} and cafe\u{301} and Z\u{E4}nzibar",
        "emoji": filler + "🙂 zanzibar 🙂",
        "control": filler + "bell\u{7}here",
        "no-match": filler,
        "exact": "Exact text " + filler,
        "short": "short zanzibar",
        "short-kelvin": "\u{212A}",
        "empty": "",
    ]

    static func makeFixture() throws -> RecordDatabase {
        let db = try makeDatabase()
        var records = [folder("f")]
        for (name, text) in texts.sorted(by: { $0.key < $1.key }) {
            var n = note(name, folder: "f", text: text)
            n["title"] = .string(name.hasPrefix("k") ? "K-" + name : name)
            records.append(n)
        }
        // A note kept as bytes (no text), its bytes holding the needle.
        var binary = Record(recordType: "Note", recordID: RecordID(recordName: "binary"))
        binary["title"] = .string("binary")
        binary["data"] = .bytes(Data((filler + "zanzibar").utf8))
        binary["folder"] = .reference(Reference(recordID: RecordID(recordName: "f"), action: .deleteSelf))
        records.append(binary)
        // A list field holding strings, one of them the Kelvin sign.
        var tagged = note("tagged", folder: "f", text: filler)
        tagged["tags"] = .list((0..<70).map { .string($0 == 3 ? "\u{212A}" : "tag\($0) zanzibar") })
        records.append(tagged)
        for name in ["escaped-by-hand", "damaged-with-needle", "damaged-without", "missing"] {
            records.append(note(name, folder: "f", text: filler + "zanzibar"))
        }
        try db.modify(saving: records)

        // A record file written by hand with escapes the writer never writes: the text holds
        // "zanzibar" only once decoded.
        let escapedPath = db.layout.recordPath("escaped-by-hand")
        var json = try String(contentsOfFile: escapedPath, encoding: .utf8)
        json = json.replacingOccurrences(of: "zanzibar", with: #"z\u0061nzibar"#)
        #expect(json.contains(#"z\u0061nzibar"#))
        try Data(json.utf8).write(to: URL(fileURLWithPath: escapedPath))
        // Damaged files: cut short (one still holds the needle), and gone.
        try Data(#"{"recordName":"damaged-with-needle","fields":{"text":{"type":"string","value":"zanzibar"#.utf8)
            .write(to: URL(fileURLWithPath: db.layout.recordPath("damaged-with-needle")))
        try Data("{".utf8).write(to: URL(fileURLWithPath: db.layout.recordPath("damaged-without")))
        try FileManager.default.removeItem(atPath: db.layout.recordPath("missing"))
        return db
    }

    /// What a query must return: every record of the type read whole and tested, sorted as the store sorts.
    static func plainEvaluation(_ db: RecordDatabase, _ query: Query) -> [String] {
        let names = db.queryMetadata(Query(recordType: query.recordType)).map(\.recordID)
        var matches: [Record] = []
        for id in names {
            guard let record = try? db.record(for: id) else { continue }
            if query.predicate.evaluate({ RecordDatabase.value(of: $0, in: record) }) { matches.append(record) }
        }
        matches.sort { a, b in
            for descriptor in query.sortDescriptors {
                let x = RecordDatabase.value(of: descriptor.key, in: a)
                let y = RecordDatabase.value(of: descriptor.key, in: b)
                if let order = SortColumns.order(x, y), order != .orderedSame {
                    return (order == .orderedAscending) == descriptor.ascending
                }
            }
            return a.recordID < b.recordID
        }
        return matches.map(\.recordID.recordName)
    }

    static let predicates: [String] = [
        "text CONTAINS[c] 'zanzibar'",
        "text CONTAINS 'zanzibar'",
        "text CONTAINS 'ZANZIBAR'",
        "text CONTAINS[c] '\"zanzibar\"'",
        #"text CONTAINS 'temp\\zan'"#,
        #"text CONTAINS '\\" lone'"#,
        "text CONTAINS 'zan\\nzibar'",
        "text CONTAINS 'tab\\tend'",
        "text CONTAINS[c] 'kelvin'",
        "text BEGINSWITH 'K'",
        "text BEGINSWITH[c] 'k'",
        "text CONTAINS[c] 'star'",
        "text CONTAINS[c] 'file'",
        "text CONTAINS[c] 'strasse'",
        "text CONTAINS[c] 'cafe'",
        "text CONTAINS 'caf\\u00e9'",
        "text CONTAINS[cd] 'zanzibar'",
        "text CONTAINS 'bell\\u0007'",
        "text CONTAINS ''",
        "text CONTAINS[c] ''",
        "text ENDSWITH[c] 'zanzibar'",
        "text == 'Exact text " + filler + "'",
        "text ==[c] 'EXACT TEXT " + filler.uppercased() + "'",
        "text LIKE[c] '*zanzibar*'",
        "NOT text CONTAINS[c] 'zanzibar'",
        "text CONTAINS[c] 'zanzibar' AND title BEGINSWITH 'u'",
        "text CONTAINS[c] 'zanzibar' OR title == 'exact'",
        "title == 'plain' OR text CONTAINS 'nothing like this'",
        "(text CONTAINS 'zanzibar' OR text CONTAINS 'ZANZIBAR') AND NOT title == 'upper'",
        "data CONTAINS[c] 'zanzibar'",
        "tags CONTAINS 'K'",
        "tags CONTAINS[c] 'tag5 zanzibar'",
        "text IN {'zanzibar'}",
        "'zanzibar' IN text",
    ]

    @Test func prefilteredQueriesMatchAPlainEvaluation() throws {
        let db = try Self.makeFixture()
        for format in Self.predicates {
            let predicate = try RecordStore.Predicate(format: format)
            for sort in [[], [SortDescriptor(key: "title", ascending: false)], [SortDescriptor(key: "text")]] {
                let query = Query(recordType: "Note", predicate: predicate, sortDescriptors: sort)
                // Without a sort descriptor the order is unspecified (as it always was).
                func inOrder(_ names: [String]) -> [String] { sort.isEmpty ? names.sorted() : names }
                let expected = inOrder(Self.plainEvaluation(db, query))
                #expect(inOrder(db.queryMetadata(query).map(\.recordID.recordName)) == expected, "\(format) sorted by \(sort.map(\.key))")
                #expect(inOrder(try db.query(query).records.map(\.recordID.recordName)) == expected, "\(format)")
            }
        }
        // The cases above that must match, so that the comparison is not vacuous.
        func names(_ format: String) throws -> Set<String> {
            Set(
                try db.query(Query(recordType: "Note", predicate: try RecordStore.Predicate(format: format))).records.map(
                    \.recordID.recordName))
        }
        #expect(try names("text CONTAINS[c] 'kelvin'") == ["kelvin"])
        #expect(try names("text BEGINSWITH 'K'") == ["kelvin", "kelvin-start", "short-kelvin"])
        #expect(try names("text CONTAINS[c] 'star'") == ["long-s"])
        #expect(try names("text CONTAINS[c] 'file'") == ["ligature"])
        #expect(try names("text CONTAINS 'zanzibar'").isSuperset(of: ["escaped-by-hand", "lower-only", "quoted", "short"]))
        #expect(try names("text CONTAINS 'zanzibar'").isDisjoint(with: ["damaged-with-needle", "missing", "binary"]))
        #expect(try names("tags CONTAINS 'K'") == ["tagged"])
        #expect(try names("text CONTAINS ''").count == Self.texts.count + 2)
    }

    @Test func aRecordRuledOutByItsSmallFieldsIsNotRead() throws {
        let db = try Self.makeFixture()
        // Only the title decides: a damaged file of a note whose title rules it out is never
        // read, so nothing is logged for it.
        let before = db.recentProblems.count
        let query = Query(recordType: "Note", predicate: try RecordStore.Predicate(format: "title == 'plain' AND text CONTAINS 'a'"))
        #expect(try db.query(query).records.map(\.recordID.recordName) == ["plain"])
        #expect(db.recentProblems.count == before)
    }

    @Test func needlesAreFoundAsTheWriterEscapesThem() {
        func found(_ needle: String, in text: String, ignoringCase: Bool = false) -> Bool {
            let comparison = Predicate.Comparison(
                lhs: .key("text"), op: .contains, options: ignoringCase ? .caseInsensitive : [], rhs: .value(.string(needle)))
            let raw = RawNeedle(comparison)!
            return RecordCoding.encode(note("n", folder: nil, text: text)).withUnsafeBytes { raw.found(in: $0) }
        }
        #expect(found("\"\\", in: "x\"\\y"))
        #expect(!found("\"\\", in: "x\"y\\"))
        #expect(found("a\nb", in: "xa\nby"))
        #expect(!found("a\nb", in: "xanby"))
        #expect(found("\u{1}", in: "a\u{1}b"))
        #expect(found("zanzibar", in: "ZaNzIbAr", ignoringCase: true))
        #expect(!found("zanzibar", in: "ZaNzIbAr"))
        #expect(found("qz", in: String(repeating: "q", count: 500) + "Qz", ignoringCase: true))
        #expect(!found("qz", in: String(repeating: "q", count: 500) + "Q z", ignoringCase: true))
        #expect(RawNeedle(Predicate.Comparison(lhs: .key("text"), op: .contains, options: [], rhs: .value(.string("")))) == nil)
        #expect(RawNeedle(Predicate.Comparison(lhs: .key("text"), op: .contains, options: [], rhs: .value(.string("é")))) == nil)
        #expect(
            RawNeedle(Predicate.Comparison(lhs: .key("text"), op: .contains, options: .diacriticInsensitive, rhs: .value(.string("e"))))
                == nil)
    }

    @Test func foreignEscapesAreHazards() {
        func hazard(_ json: String) -> Bool { Array(json.utf8).withUnsafeBytes { RawJSONHazards.hasForeignEscape($0) } }
        #expect(!hazard(#"{"a":"x\"y\\z\n\r\t\u0001\u001f"}"#))
        #expect(hazard(#"{"a":"\u0041"}"#))
        #expect(hazard(#"{"a":"\u000a"}"#))
        #expect(hazard(#"{"a":"\u001F"}"#))
        #expect(hazard(#"{"a":"\/"}"#))
        #expect(hazard(#"{"a":"\b"}"#))
        #expect(hazard(#"{"a":"\f"}"#))
        #expect(!hazard(#"{"a":"\\u0041"}"#))
        #expect(hazard(#"{"a":"x\"#))
    }

    /// Every scalar whose case folding or canonical composition holds ASCII is a hazard (the set is
    /// written out in the source; this finds it again from Foundation's folding).
    @Test func scalarsFoldingToASCIIAreAllKnown() {
        var found = Set<UInt32>()
        // Case folding and canonical singletons to ASCII all lie below U+30000.
        for value in UInt32(0x80)..<0x30000 {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let s = String(Character(scalar))
            let folded = s.folding(options: .caseInsensitive, locale: nil)
            let forms = [folded, s.precomposedStringWithCanonicalMapping, folded.precomposedStringWithCanonicalMapping]
            if folded.isEmpty || forms.contains(where: { $0.unicodeScalars.contains(where: \.isASCII) }) { found.insert(value) }
        }
        #expect(found == RawJSONHazards.scalarsFoldingToASCII)
        for value in RawJSONHazards.scalarsFoldingToASCII {
            let utf8 = Array(String(Character(Unicode.Scalar(value)!)).utf8)
            #expect(utf8.withUnsafeBytes { RawJSONHazards.hasScalarFoldingToASCII($0) })
        }
        #expect(!Array("plain ascii and é ü ñ 🙂".utf8).withUnsafeBytes { RawJSONHazards.hasScalarFoldingToASCII($0) })
    }
}
