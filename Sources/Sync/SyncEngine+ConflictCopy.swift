import Foundation
import RecordStore

extension SyncEngine {
    /// A new note beside `local` holding the local values that lost a conflict (`losing`), titled
    /// `Title (conflict YYYY-MM-DD HOST)`; its other fields are the merged record's.
    func makeConflictCopy(of local: Record, merged: RecordPayload, losing: [String: FieldValue]) -> (record: Record, entry: ConflictCopy) {
        let now = Date()
        let title = (merged.fields["title"]?.stringValue ?? local["title"]?.stringValue ?? "Untitled")
            + " (conflict \(Self.day(now)) \(state.host))"
        var copy = Record(recordType: local.recordType)
        for (key, value) in merged.fields.merging(losing, uniquingKeysWith: { _, losing in losing }) { copy[key] = value }
        if losing["content"] == nil, losing["text"] != nil { copy["content"] = nil }
        copy["title"] = .string(title)
        copy.modificationDate = local.modificationDate ?? now
        let entry = ConflictCopy(recordName: local.recordID.recordName, copyRecordName: copy.recordID.recordName, title: title, date: now)
        return (copy, entry)
    }

    /// `YYYY-MM-DD` in the local time zone.
    static func day(_ date: Date) -> String {
        let parts = Calendar(identifier: .gregorian).dateComponents([.year, .month, .day], from: date)
        return String(format: "%04d-%02d-%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0)
    }
}
