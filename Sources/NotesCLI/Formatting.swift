import Foundation
import Notes
import RecordStore

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Text and JSON forms of dates, entries and records shared by the commands.
enum Formatting {
    /// `2026-11-29T22:09:45.123456Z` (UTC, microseconds).
    static func iso(_ date: Date) -> String {
        let t = clampedInterval(date)
        var seconds = Int(t.rounded(.down))
        var micros = Int(((t - Double(seconds)) * 1_000_000).rounded())
        if micros >= 1_000_000 {
            seconds += 1
            micros -= 1_000_000
        }
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        // Padded here: `String(format:)` costs its first caller a search of the runtime's protocol
        // conformances (3% of a search's samples).
        func padded(_ n: Int, _ width: Int) -> String {
            let digits = String(n)
            return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
        }
        return padded(Int(parts.tm_year) + 1900, 4) + "-" + padded(Int(parts.tm_mon) + 1, 2) + "-" + padded(Int(parts.tm_mday), 2) + "T"
            + padded(Int(parts.tm_hour), 2) + ":" + padded(Int(parts.tm_min), 2) + ":" + padded(Int(parts.tm_sec), 2) + "."
            + padded(micros, 6) + "Z"
    }

    /// The earliest and latest instants printed: 0001-01-01 and 9999-12-31T23:59:59Z.
    static let printableSeconds: ClosedRange<Double> = -62_135_596_800...253_402_300_799

    /// Seconds since 1970 clamped to ``printableSeconds`` (a damaged or hand-edited record may hold
    /// any double: 1e300 or -1e300 print as the bounds, NaN as 1970), so no conversion traps.
    static func clampedInterval(_ date: Date) -> Double {
        let t = date.timeIntervalSince1970
        guard !t.isNaN else { return 0 }
        return min(max(t, printableSeconds.lowerBound), printableSeconds.upperBound)
    }

    /// `2026-11-29 22:09:45` (UTC), for `ls -l`.
    static func short(_ date: Date?) -> String {
        guard let date else { return "-                  " }
        let text = iso(date)
        return String(text.prefix(10)) + " " + String(text.dropFirst(11).prefix(8))
    }

    /// `1 note`, `2 notes`.
    /// A byte count for people: `912 B`, `4.2 KB`, `37.5 MB`, `1.2 GB` (powers of 1,000).
    static func bytes(_ n: Int64) -> String {
        let units = ["B", "KB", "MB", "GB", "TB"]
        var value = Double(n)
        var unit = 0
        while value >= 1000, unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        return unit == 0 ? "\(n) B" : String(format: "%.1f %@", value, units[unit])
    }

    static func count(_ n: Int, _ noun: String) -> String { "\(n) \(noun)\(n == 1 ? "" : "s")" }

    static func kindName(_ kind: EntryNames.Kind) -> String {
        switch kind {
        case .folder: "folder"
        case .note: "note"
        case .attachment: "attachment"
        case .symlink: "symlink"
        case .special: "special"
        case .link: "link"
        }
    }

    static func json(_ entry: FolderEntry) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("path", .string(entry.path)), ("name", .string(entry.fileName)), ("type", .string(kindName(entry.kind))),
            ("recordName", .string(entry.recordID.recordName)),
        ]
        if let size = entry.size { members.append(("size", .int(Int64(size)))) }
        if entry.isBinaryNote { members.append(("binary", .bool(true))) }
        if let date = entry.metadata?.record.creationDate { members.append(("creationDate", .string(iso(date)))) }
        if let date = entry.modificationDate { members.append(("modificationDate", .string(iso(date)))) }
        return .object(members)
    }

    static func json(_ record: Record, path: String?) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("recordName", .string(record.recordID.recordName)), ("recordType", .string(record.recordType)),
        ]
        if let path { members.append(("path", .string(path))) }
        if let tag = record.recordChangeTag { members.append(("recordChangeTag", .string(tag))) }
        if let date = record.creationDate { members.append(("creationDate", .string(iso(date)))) }
        if let date = record.modificationDate { members.append(("modificationDate", .string(iso(date)))) }
        members.append(("fields", .object(record.allKeys.compactMap { key in record[key].map { (key, json($0)) } })))
        return .object(members)
    }

    static func json(_ value: FieldValue) -> JSONValue {
        switch value {
        case .string(let s): .string(s)
        case .int64(let n): .int(n)
        case .double(let d): .double(d)
        case .bool(let b): .bool(b)
        case .date(let d): .string(iso(d))
        case .bytes(let d): .string(d.base64EncodedString())
        case .asset(let a): .object([("sha256", .string(a.sha256)), ("size", .int(a.size))])
        case .reference(let r): .object([("recordName", .string(r.recordID.recordName)), ("action", .string(r.action.rawValue))])
        case .list(let items): .array(items.map(json))
        }
    }
}
