import Foundation
import Notes
import RecordStore

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}

/// One state of a note for the history commands: a kept version, or the note as it is now.
struct NoteState {
    /// Nil for the current state.
    var version: Version?
    var date: Date
    var size: Int64
    var kind: String

    var id: String { version?.shortID ?? "current" }
    var fullID: String { version?.recordID.recordName ?? "current" }
}

/// Parses the `DATE|VERSION` arguments of the history commands and finds the state they name.
enum VersionSelector {
    /// A date as the history commands take it, in UTC: `2026-12-03`, `2026-12-03T08:00`,
    /// `2026-12-03T08:00:05`, `2026-12-03 08:00:05.25`, with an optional trailing `Z`; nil when
    /// `text` is none of these.
    static func date(_ text: String) -> Date? {
        var s = Substring(text)
        if s.hasSuffix("Z") { s = s.dropLast() }
        let parts = s.split(maxSplits: 1, whereSeparator: { $0 == "T" || $0 == " " })
        guard let day = parts.first else { return nil }
        let ymd = day.split(separator: "-", omittingEmptySubsequences: false)
        guard ymd.count == 3, ymd[0].count == 4, ymd[1].count == 2, ymd[2].count == 2,
            let year = Int(ymd[0]), let month = Int(ymd[1]), let dayOfMonth = Int(ymd[2]),
            (1...12).contains(month), (1...31).contains(dayOfMonth)
        else { return nil }
        var (hour, minute, second) = (0, 0, 0.0)
        if parts.count == 2 {
            let hms = parts[1].split(separator: ":", omittingEmptySubsequences: false)
            guard (2...3).contains(hms.count), hms[0].count == 2, hms[1].count == 2, let h = Int(hms[0]), let m = Int(hms[1]),
                (0...23).contains(h), (0...59).contains(m)
            else { return nil }
            (hour, minute) = (h, m)
            if hms.count == 3 {
                guard hms[2].count >= 2, hms[2].first!.isNumber, let s = Double(hms[2]), s.isFinite, s >= 0, s < 61 else { return nil }
                second = s
            }
        }
        var parts2 = tm()
        parts2.tm_year = Int32(year - 1900)
        parts2.tm_mon = Int32(month - 1)
        parts2.tm_mday = Int32(dayOfMonth)
        parts2.tm_hour = Int32(hour)
        parts2.tm_min = Int32(minute)
        let seconds = timegm(&parts2)
        guard seconds != -1 || (year == 1969) else { return nil }
        return Date(timeIntervalSince1970: Double(seconds) + second)
    }

    /// Every state of the note `entry`: its kept versions, oldest first, then the current one.
    static func states(of entry: FolderEntry, database: RecordDatabase) -> [NoteState] {
        var states = VersionHistory.versions(ofNoteNamed: entry.recordID.recordName, in: database).map { version in
            NoteState(version: version, date: version.date, size: version.size, kind: version.kindName)
        }
        states.append(NoteState(version: nil, date: entry.modificationDate ?? Date(), size: Int64(entry.size ?? 0), kind: "current"))
        return states
    }

    /// The state `selector` names among `states`: `current`; a date (the state in effect then:
    /// the newest one written at or before it); or a version ID (or a unique prefix of one, at
    /// least 4 characters, as `note log` prints them).
    ///
    /// - Throws: a not-found ``CLIError`` when nothing matches, a usage one when a prefix is ambiguous.
    static func state(_ selector: String, in states: [NoteState], path: String) throws(CLIError) -> NoteState {
        if selector == "current", let current = states.last { return current }
        if let date = date(selector) {
            guard let state = states.last(where: { $0.date <= date }) else {
                throw CLIError(
                    .notFound, path,
                    "no version at or before \(Formatting.iso(date)) (the oldest is from \(Formatting.iso(states[0].date)))")
            }
            return state
        }
        // Four digits and a dash: meant as a date (no version ID has its first dash there).
        if selector.count > 4, selector.prefix(4).allSatisfy(\.isASCIIDigit), selector.dropFirst(4).first == "-" {
            throw CLIError(.usage, path, "'\(selector)' is not a valid date (2026-12-03, 2026-12-03T08:00:00Z; UTC)")
        }
        let prefix = selector.lowercased()
        guard prefix.count >= 4 else {
            throw CLIError(
                .usage, path, "'\(selector)' is neither a date (2026-12-03T08:00:00Z, UTC) nor a version ID (at least 4 characters)")
        }
        let matches = states.filter { $0.version?.recordID.recordName.lowercased().hasPrefix(prefix) == true }
        guard let match = matches.first else { throw CLIError(.notFound, path, "no version \(selector) (see 'notesfs note log')") }
        guard matches.count == 1 else { throw CLIError(.usage, path, "version ID \(selector) is ambiguous: give more characters") }
        return match
    }

    /// The bytes of a state: the note's own record for the current state, the version's whole record otherwise.
    static func bytes(of state: NoteState, entry: FolderEntry, database: RecordDatabase) throws(CLIError) -> StoredBytes {
        if let version = state.version {
            do { return StoredBytes(of: try VersionHistory.fullVersion(version.recordID, in: database).record) } catch {
                throw CLIError.notes(error, subject: entry.path)
            }
        }
        let record: Record
        do { record = try database.record(for: entry.recordID) } catch { throw CLIError.store(error, subject: entry.path) }
        return StoredBytes(of: record)
    }
}
