import Foundation
import Synchronization
import TestSupport
import Testing

@testable import RecordStore

/// The fast paths of record file reads give what the careful ones give.
@Suite struct FastPathTests {
    /// JSON string literals (as written in a file, quotes included): escapes at every alignment of
    /// the eight-byte steps, escapes the writer never writes, non-ASCII text, and damage.
    static let literals: [String] = {
        var literals = [
            #""a\nb""#, #""\n""#, #""\\""#, #""\"""#, #""\\\"""#, #""ends in an escaped backslash \\""#,
            #""\/ \b \f \r \t \u0041 \u007f \u0000 \u001f""#, #""é and \n""#, #""\u00e9 above ASCII""#,
            #""\ud83e\uddea pair""#, #""\ud83e alone""#, #""\q bad""#, #""bad at the end \""#, #""unterminated \n"#,
            "\"raw \u{1} control after \\n\"", "\"\\n raw \u{7f} del\"", #""\u12 short""#, #""\u00zz""#,
            #""\\\\\\\\ four backslashes""#, "\"\(String(repeating: "abcdefg\\n", count: 300))\"",
        ]
        for offset in 0..<17 {
            let head = String(repeating: "x", count: offset)
            literals.append("\"\(head)\\n\(head)\\\"\(head)\\\\\"")
        }
        return literals
    }()

    @Test(arguments: literals) func stringsDecodeAsFoundationDecodesThem(_ literal: String) throws {
        let foundation = try? JSONSerialization.jsonObject(with: Data(literal.utf8), options: .fragmentsAllowed) as? String
        let ours: String? = try? Data(literal.utf8).withJSONCursor { (cursor) throws(JSONSyntaxError) in
            let s = try cursor.readString()
            try cursor.expectEnd()
            return s
        }
        // Foundation accepts a lone surrogate (repairing it) and DEL; ours rejects the first.
        if literal.contains(#"\ud83e alone"#) {
            #expect(ours == nil)
        } else {
            #expect(ours == foundation, "\(literal)")
        }
    }

    /// Strings with each byte the writer escapes (and bytes it must not: DEL, non-ASCII) at every
    /// position of the eight-byte steps and in the last few bytes.
    static let written: [String] = {
        var strings = ["", "plain", "é€𝄞 mixed", String(repeating: "line of text\n", count: 200)]
        for special in ["\"", "\\", "\n", "\u{0}", "\u{1f}", "\t", "\u{7f}", "é"] {
            for offset in 0..<19 {
                strings.append(String(repeating: "x", count: offset) + special + String(repeating: "y", count: 18 - offset))
                strings.append(String(repeating: "x", count: offset) + special)
            }
        }
        return strings
    }()

    @Test(arguments: written) func theWriterEscapesWhatABytewiseWriterEscapes(_ string: String) throws {
        var writer = JSONWriter()
        writer.string(string)
        // The reference: every byte looked at alone.
        var expected: [UInt8] = [0x22]
        for byte in string.utf8 {
            switch byte {
            case 0x22: expected += Array(#"\""#.utf8)
            case 0x5C: expected += Array(#"\\"#.utf8)
            case 0x0A: expected += Array(#"\n"#.utf8)
            case 0x0D: expected += Array(#"\r"#.utf8)
            case 0x09: expected += Array(#"\t"#.utf8)
            case ..<0x20: expected += Array(String(format: "\\u%04x", byte).utf8)
            default: expected.append(byte)
            }
        }
        expected.append(0x22)
        #expect(writer.bytes == expected, "\(string.debugDescription)")
        let readBack = try Data(writer.bytes).withJSONCursor { (cursor) throws(JSONSyntaxError) in try cursor.readString() }
        #expect(readBack == string)
    }

    @Test func numbersAreWrittenAsSwiftSpellsThem() {
        let signed: [Int64] = [0, 1, -1, 9, 10, -10, 99, 100, 12_345, -987_654_321, .max, .min, .max - 1, .min + 1]
        for value in signed {
            var writer = JSONWriter()
            writer.number(value)
            #expect(String(decoding: writer.bytes, as: UTF8.self) == String(value))
        }
        for value: UInt64 in [0, 7, 10, 1 << 32, .max, .max - 1, UInt64(Int64.max) + 1] {
            var writer = JSONWriter()
            writer.number(value)
            #expect(String(decoding: writer.bytes, as: UTF8.self) == String(value))
        }
    }

    /// JSON values (and near misses) of every kind, followed by `,1` so that where a skip ends shows.
    static let values: [String] = [
        #""plain""#, #""esc \n \" \\ \/ \t""#, #""é non-ASCII""#, #""\u0041 and \ud83e\uddea""#, #""\ud83e alone""#,
        #""bad \q""#, "\"raw \u{1} control\"", #""unterminated"#,
        "0", "-0", "12", "-3.25", "1e5", "1E+5", "2.5e-3", "01", "1.", ".5", "+1", "-", "1.2.3", "1e", "--1", "1x",
        "true", "false", "null", "tru", "nul", "{}", "[]", #"{"a":1,"b":[1,{"c":"d"}]}"#, #"{"a" 1}"#, #"{"a":1,}"#,
        "[1,2", #"{"a":}"#, "[,]", String(repeating: "[", count: 600) + String(repeating: "]", count: 600),
        String(repeating: "[", count: 20) + String(repeating: "]", count: 20), "",
    ]

    @Test(arguments: values.map { Array($0.utf8) } + [[0x22, 0xFF, 0xFE, 0x22], [0x22, 0x61, 0xC3, 0x22], [0x22, 0xC3, 0xA9, 0x22]])
    func skippingAValueAcceptsAndEndsAsParsingIt(_ value: [UInt8]) {
        // The last three: bytes that are not UTF-8, a sequence cut short, and "é".
        let bytes = value + Array(",1".utf8)
        func end(_ step: (inout JSONCursor) throws(JSONSyntaxError) -> Void) -> Int? {
            bytes.withUnsafeBufferPointer { buffer in
                var cursor = JSONCursor(buffer)
                do throws(JSONSyntaxError) {
                    try step(&cursor)
                    return cursor.index
                } catch {
                    return nil
                }
            }
        }
        let parsed = end { (c) throws(JSONSyntaxError) in _ = try c.parseTreeValue() }
        let skipped = end { (c) throws(JSONSyntaxError) in try c.skipValue() }
        #expect(skipped == parsed, "\(String(decoding: value, as: UTF8.self))")
    }

    /// A note file as the store writes it, or altered: only its large fields are decoded, and only
    /// when the file is the version the index holds; anything else is left to the whole decoder.
    @Test func aFileOfTheIndexedVersionGivesItsLargeFieldsAlone() throws {
        let db = try makeDatabase()
        var record = note("n", folder: nil, text: "line one\nquote \" backslash \\ tab\t é 🧪 " + String(repeating: "text ", count: 100))
        record["title"] = "a title with \"quotes\" and é"
        record["rank"] = .int64(-42)
        record["tags"] = .list(["x", "y"])
        try db.modify(saving: [record])
        let metadata = try #require(db.metadata(for: record.recordID))
        #expect(metadata.isPartial)
        let path = db.layout.recordPath("n")
        let file = try Data(contentsOf: URL(fileURLWithPath: path))
        func merged(_ bytes: Data, _ metadata: RecordMetadata = metadata) -> Record? {
            bytes.withUnsafeBytes { RecordDatabase.merged(metadata, fromFile: $0) }
        }
        let whole = try db.record(for: record.recordID)
        #expect(merged(file) == whole)
        #expect(merged(file)?["text"] == record["text"])
        // Written with other spacing and members in another order: still the same record.
        let text = String(decoding: file, as: UTF8.self)
        let json = try #require(try JSONSerialization.jsonObject(with: file) as? [String: Any])
        let reordered = try JSONSerialization.data(withJSONObject: json, options: [.prettyPrinted])
        #expect(merged(reordered) == whole)
        // Another version (tag), another record, another type, a missing large field, damage anywhere.
        let others = [
            text.replacingOccurrences(of: #""recordChangeTag":"\#(metadata.recordChangeTag!)""#, with: #""recordChangeTag":"zz""#),
            text.replacingOccurrences(of: #""recordName":"n""#, with: #""recordName":"m""#),
            text.replacingOccurrences(of: #""recordType":"Note""#, with: #""recordType":"Other""#),
            text.replacingOccurrences(of: #""text":"#, with: #""txet":"#),
            text.replacingOccurrences(of: #""creationDate":"#, with: #""creationDate":--"#),
            text.replacingOccurrences(of: "a title with", with: "a title \\q with"),
            text.replacingOccurrences(of: #""rank":{"type":"int64","value":-42}"#, with: #""rank":{"type":"int64","value":-42"#),
            String(text.dropLast()),
            text + "x",
        ]
        for other in others {
            #expect(other != text)
            #expect(merged(Data(other.utf8)) == nil, "\(other)")
        }
    }

    /// Hostile nesting in a member of note files that the index does not hold, read by a query's
    /// batch (on several threads): up to the parsers' limit of 512 it is stepped over and the notes
    /// come back; past it every file is damaged, its note left out (and logged), and nothing crashes.
    @Test(arguments: [500, 600]) func deepNestingInRecordFilesIsSteppedOverOrRefused(_ depth: Int) throws {
        let db = try makeDatabase()
        try db.modify(saving: [folder("f")])
        try db.modify(saving: (0..<64).map { note("n\($0)", folder: "f", text: String(repeating: "text \($0) ", count: 40)) })
        let nested = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        for i in 0..<64 {
            let path = db.layout.recordPath("n\(i)")
            let json = try String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(json.hasSuffix("}"))
            try Data((json.dropLast() + #","extra":"# + nested + "}").utf8).write(to: URL(fileURLWithPath: path))
        }
        let inF = try RecordStore.Predicate(
            format: "folder == %@", .reference(Reference(recordID: RecordID(recordName: "f"), action: .deleteSelf)))
        let records = try db.query(Query(recordType: "Note", predicate: inF)).records
        if depth < 512 {
            #expect(records.count == 64)
            #expect(records.allSatisfy { $0["text"]?.stringValue?.hasPrefix("text ") == true })
        } else {
            #expect(records.isEmpty)
        }
    }

    @Test func aStringInsideADocumentEndsAtItsOwnQuote() throws {
        let data = Data(#"["one\n", "two \"quoted\"\\", "three"]"#.utf8)
        let strings: [String] = try data.withJSONCursor { (cursor) throws(JSONSyntaxError) in
            var strings: [String] = []
            try cursor.readArray { (c) throws(JSONSyntaxError) in strings.append(try c.readString()) }
            return strings
        }
        #expect(strings == ["one\n", "two \"quoted\"\\", "three"])
    }

    static let names = [
        "note-1", "a/b", "..", "%2e", "nul\u{0}byte", "é", String(repeating: "n", count: 160), String(repeating: "n", count: 161),
        String(repeating: "é", count: 27), String(repeating: "é", count: 26), String(repeating: "/", count: 60),
    ]

    @Test(arguments: names) func filePathsInABufferAreTheFilesPaths(_ name: String) {
        let relative = RecordFileName.relativePath(for: name)
        let inRecords = RecordFileName.withFilePath(for: name, inShard: false) { String(cString: $0) }
        let inShard = RecordFileName.withFilePath(for: name, inShard: true) { String(cString: $0) }
        if RecordFileName.fileName(for: name).contains("~") {
            // Cut and hashed: no buffer path.
            #expect(inRecords == nil && inShard == nil)
        } else {
            #expect(inRecords.map { "records/" + $0 } == relative)
            let shard = String(format: "%02x", RecordFileName.shard(of: name))
            #expect(inShard.map { "records/\(shard)/" + $0 } == relative)
        }
    }
}

@Suite struct RecordFileBatchTests {
    /// Every file's bytes as a batch reads them, by record name.
    static func read(_ db: RecordDatabase, _ ids: [RecordID], shardDirectoriesFrom: Int) -> [String: [UInt8]] {
        let read = Mutex<[String: [UInt8]]>([:])
        RecordFileBatch.forEach(ids, layout: db.layout, shardDirectoriesFrom: shardDirectoriesFrom) { i, bytes in
            guard let bytes else { return }
            read.withLock { $0[ids[i].recordName] = Array(bytes) }
        }
        return read.withLock { $0 }
    }

    @Test func shardDirectoriesAndPathsReadTheSameFiles() throws {
        let db = try makeDatabase()
        // Names of every kind: plain, escaped, cut and hashed (opened by its whole path).
        var names = (0..<200).map { "n\($0)" } + ["a/b", "..", "é", String(repeating: "long", count: 60)]
        names.append(String(repeating: "/", count: 70))
        try db.modify(saving: names.map { note($0, folder: nil, text: "text of \($0)\n" + String(repeating: "x", count: 300)) })
        try db.modify(saving: [note("missing", folder: nil, text: String(repeating: "y", count: 300))])
        try FileManager.default.removeItem(atPath: db.layout.recordPath("missing"))
        let ids = (names + ["missing"]).map(RecordID.init(recordName:))
        let byPath = Self.read(db, ids, shardDirectoriesFrom: .max)
        let byShard = Self.read(db, ids, shardDirectoriesFrom: 1)
        #expect(byPath.count == names.count)
        #expect(byShard == byPath)
        for name in names {
            let file = try Data(contentsOf: URL(fileURLWithPath: db.layout.recordPath(name)))
            #expect(byShard[name] == Array(file), "\(name)")
        }
    }

    @Test func aFileOfTheIndexVersionAndALaggingFileReadTheSame() throws {
        let db = try makeDatabase()
        try db.modify(saving: (0..<40).map { note("n\($0)", folder: nil, text: "zanzibar \($0) " + String(repeating: "t", count: 300)) })
        // A metadata-only save: the file keeps the older version (and tag) of half of them.
        let lagging = try (0..<20).map { i in
            var partial = try #require(db.metadata(for: RecordID(recordName: "n\(i)"))).record
            partial["title"] = .string("renamed \(i)")
            return partial
        }
        try db.modify(saving: lagging)
        let query = Query(recordType: "Note", predicate: try Predicate(format: "text CONTAINS[c] %@", "ZANZIBAR"))
        let records = try db.query(query).records
        #expect(records.count == 40)
        for record in records {
            let i = Int(record.recordID.recordName.dropFirst())!
            #expect(record["title"] == .string(i < 20 ? "renamed \(i)" : "n\(i)"))
            #expect(record["text"]?.stringValue?.hasPrefix("zanzibar \(i) ") == true)
            #expect(!record.isPartial)
            #expect(record == (try db.record(for: record.recordID)))
        }
    }
}
