import Foundation
import RecordStore

extension SyncEngine {
    /// A new note (or attachment) beside `local` holding the local values that lost a conflict
    /// (`losing`), titled `Title (conflict YYYY-MM-DD HOST)` (an attachment `photo.jpg` is named
    /// `photo (conflict YYYY-MM-DD HOST).jpg`); its other fields are the merged record's.
    func makeConflictCopy(of local: Record, merged: RecordPayload, losing: [String: FieldValue]) -> (record: Record, entry: ConflictCopy) {
        let now = Date()
        let key = local.recordType == "Attachment" ? "name" : "title"
        let name = merged.fields[key]?.stringValue ?? local[key]?.stringValue ?? "Untitled"
        let title = Self.conflictName(name, suffix: " (conflict \(Self.day(now)) \(state.host))", keepsExtension: key == "name")
        var copy = Record(recordType: local.recordType)
        for (key, value) in merged.fields.merging(losing, uniquingKeysWith: { _, losing in losing }) { copy[key] = value }
        if losing["content"] == nil, losing["text"] != nil { copy["content"] = nil }
        copy[key] = .string(title)
        copy.modificationDate = local.modificationDate ?? now
        let entry = ConflictCopy(recordName: local.recordID.recordName, copyRecordName: copy.recordID.recordName, title: title, date: now)
        return (copy, entry)
    }

    /// `name` with `suffix` added, before its extension when `keepsExtension` and it has one
    /// (`a.tar.gz` counts `.gz` only; a leading dot, as in `.profile`, is no extension).
    static func conflictName(_ name: String, suffix: String, keepsExtension: Bool) -> String {
        guard keepsExtension, let dot = name.lastIndex(of: "."), dot > name.startIndex else { return name + suffix }
        return String(name[..<dot]) + suffix + String(name[dot...])
    }

    /// `YYYY-MM-DD` in the local time zone.
    static func day(_ date: Date) -> String {
        let parts = Calendar(identifier: .gregorian).dateComponents([.year, .month, .day], from: date)
        return String(format: "%04d-%02d-%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0)
    }
}
