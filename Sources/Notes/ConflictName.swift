import Foundation

/// The name of a conflict copy: `Title (conflict YYYY-MM-DD HOST)`, for a note's title, and
/// `photo (conflict YYYY-MM-DD HOST).jpg` for an attachment's name (the suffix goes before the
/// extension). Used wherever two versions of one note are both kept: a sync's overlapping edits,
/// and a mount's save refused because the note changed elsewhere.
public enum ConflictName {
    /// `name` with the conflict suffix for `date` and `host`, before its extension when
    /// `keepsExtension`.
    public static func name(_ name: String, keepsExtension: Bool, date: Date = Date(), host: String = hostName()) -> String {
        suffixed(name, suffix: " (conflict \(day(date)) \(host))", keepsExtension: keepsExtension)
    }

    /// `name` with `suffix` added, before its extension when `keepsExtension` and it has one
    /// (`a.tar.gz` counts `.gz` only; a leading dot, as in `.profile`, is no extension).
    public static func suffixed(_ name: String, suffix: String, keepsExtension: Bool) -> String {
        guard keepsExtension, let dot = name.lastIndex(of: "."), dot > name.startIndex else { return name + suffix }
        return String(name[..<dot]) + suffix + String(name[dot...])
    }

    /// `YYYY-MM-DD` in the local time zone.
    public static func day(_ date: Date) -> String {
        let parts = Calendar(identifier: .gregorian).dateComponents([.year, .month, .day], from: date)
        return String(format: "%04d-%02d-%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0)
    }

    /// This machine's host name (`gethostname`), `host` when it has none.
    public static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "host" }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return name.isEmpty ? "host" : name
    }
}
