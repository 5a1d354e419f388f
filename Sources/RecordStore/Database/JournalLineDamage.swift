import Foundation

/// A complete journal line that does not decode (damaged bytes, or a value the store cannot read
/// back), as ``JournalFile/readEntries(_:damaged:)`` meets it.
struct DamagedJournalLine {
    /// Its byte offset in the journal.
    var offset: Int
    /// The line without its newline.
    var bytes: Data
    /// Why it does not decode.
    var reason: String

    /// The bytes of the line in the file, newline included.
    var range: Range<Int> { offset..<(offset + bytes.count + 1) }

    /// The names of the records the line saves and deletes, as far as they can be read: exactly
    /// when the line is JSON (a value the store refuses), else every record object's
    /// `"recordName"` (not a reference's) and the `"deletes"` list if it is intact.
    func recordNames() -> (saves: [String], deletes: [String]) {
        if let json = try? JSON.parse(bytes), json.object != nil {
            let saves = (json["saves"]?.array ?? []).compactMap { $0["recordName"]?.string }
            return (saves, (json["deletes"]?.array ?? []).compactMap(\.string))
        }
        let bytes = [UInt8](bytes)
        var saves: [String] = []
        let record = Array(#"{"recordName":"#.utf8)
        let reference = Array(#""value":"#.utf8)
        var i = 0
        while let found = Self.find(record, in: bytes, from: i) {
            i = found + record.count
            let isReference = found >= reference.count && bytes[(found - reference.count)..<found].elementsEqual(reference)
            if !isReference, let (name, end) = Self.string(in: bytes, at: i) {
                saves.append(name)
                i = end
            }
        }
        var deletes: [String] = []
        let deletesKey = Array(#""deletes":"#.utf8)
        if let found = Self.find(deletesKey, in: bytes, from: 0), let close = Self.arrayEnd(in: bytes, at: found + deletesKey.count),
            let list = try? JSON.parse(Data(bytes[(found + deletesKey.count)...close])).array
        {
            deletes = list.compactMap(\.string)
        }
        return (saves, deletes)
    }

    /// The first index at or after `start` where `pattern` begins.
    private static func find(_ pattern: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        guard let first = pattern.first, bytes.count >= pattern.count else { return nil }
        var i = start
        while i <= bytes.count - pattern.count {
            if bytes[i] == first, bytes[i..<(i + pattern.count)].elementsEqual(pattern) { return i }
            i += 1
        }
        return nil
    }

    /// The JSON string whose opening quote is at `start`, and the index just past it.
    private static func string(in bytes: [UInt8], at start: Int) -> (String, Int)? {
        guard start < bytes.count, bytes[start] == UInt8(ascii: "\""), let close = stringEnd(in: bytes, at: start) else { return nil }
        guard let name = try? JSON.parse(Data(bytes[start...close])).string, !name.isEmpty else { return nil }
        return (name, close + 1)
    }

    /// The index of the quote closing the JSON string opened at `start`.
    private static func stringEnd(in bytes: [UInt8], at start: Int) -> Int? {
        var i = start + 1
        while i < bytes.count {
            switch bytes[i] {
            case UInt8(ascii: "\\"): i += 2
            case UInt8(ascii: "\""): return i
            default: i += 1
            }
        }
        return nil
    }

    /// The index of the `]` closing the array of strings opened at `start`.
    private static func arrayEnd(in bytes: [UInt8], at start: Int) -> Int? {
        guard start < bytes.count, bytes[start] == UInt8(ascii: "[") else { return nil }
        var i = start + 1
        while i < bytes.count {
            switch bytes[i] {
            case UInt8(ascii: "\""):
                guard let end = stringEnd(in: bytes, at: i) else { return nil }
                i = end + 1
            case UInt8(ascii: "]"): return i
            default: i += 1
            }
        }
        return nil
    }
}

/// A record whose change in a damaged journal line is lost, and why.
public struct LostChange: Sendable, Hashable {
    public var recordID: RecordID
    public var reason: String
}

/// What recovery did with a journal line it could not read: the line is kept in `lost+found/`,
/// the lines after it still apply, and each record the line held is taken from its record file
/// when that file is readable and newer than what the index holds; the rest are reported lost.
public struct JournalLineDamage: Sendable, Hashable, CustomStringConvertible {
    /// The line's byte offset in the journal.
    public var offset: Int
    /// Why it could not be read.
    public var reason: String
    /// Where its bytes were kept (`lost+found/…`); nil when the database is read-only.
    public var copy: String?
    /// Records whose version in the line was taken from their record file.
    public var restored: [RecordID] = []
    /// Records whose change in the line is lost.
    public var lost: [LostChange] = []

    public var description: String {
        var text = "journal line at byte \(offset) could not be read (\(reason))"
        if let copy { text += "; it was kept in \(copy)" }
        if !restored.isEmpty { text += "; restored from their record files: " + restored.map(\.recordName).joined(separator: ", ") }
        if !lost.isEmpty { text += "; lost: " + lost.map { "record \($0.recordID.recordName) (\($0.reason))" }.joined(separator: "; ") }
        return text
    }
}

extension RecordDatabase {
    /// The journal entry that stands for a damaged line at `seq` (the seq after the line before
    /// it: a journal's lines are consecutive), built from the record files of the records it
    /// names: a readable file is the record's version when the index lacks the record or holds an
    /// older version (by change tag, the seq of its commit in base 36); a missing file deletes a
    /// record the line deleted. Anything else keeps what the index holds and is reported lost.
    /// Applied to `index` by the caller.
    static func standIn(for line: DamagedJournalLine, seq: UInt64, index: RecordIndex, layout: DatabaseLayout) -> (
        JournalEntry, JournalLineDamage
    ) {
        var damage = JournalLineDamage(offset: line.offset, reason: line.reason)
        var entry = JournalEntry(seq: seq, saves: [], deletes: [])
        let (saves, deletes) = line.recordNames()
        let deleted = Set(deletes)
        var seen = Set<String>()
        for name in saves + deletes where seen.insert(name).inserted {
            let id = RecordID(recordName: name)
            let current = index.entries[name]
            let change = deleted.contains(name) ? "its delete" : "its save"
            do {
                let record = try RecordFiles.read(id, layout: layout)
                if let current, !isNewer(record.recordChangeTag, than: current.recordChangeTag) {
                    damage.lost.append(LostChange(recordID: id, reason: "\(change) is lost; it keeps its earlier version"))
                } else {
                    entry.saves.append(record)
                    damage.restored.append(id)
                }
            } catch {
                let missing: Bool
                if case .damagedRecord(_, _, "record file is missing") = error { missing = true } else { missing = false }
                if missing, deleted.contains(name) {
                    if current != nil { entry.deletes.append(id) }
                } else if current != nil {
                    damage.lost.append(LostChange(recordID: id, reason: "\(change) is lost (\(error)); it keeps its earlier version"))
                } else {
                    damage.lost.append(LostChange(recordID: id, reason: "its only version was in the line, and \(error)"))
                }
            }
        }
        entry.encodeSaves()
        return (entry, damage)
    }

    /// Whether change tag `tag` is of a later commit than `other` (tags are commit seqs in base 36).
    private static func isNewer(_ tag: String?, than other: String?) -> Bool {
        guard let seq = tag.flatMap({ UInt64($0, radix: 36) }) else { return false }
        guard let otherSeq = other.flatMap({ UInt64($0, radix: 36) }) else { return true }
        return seq > otherSeq
    }
}
