import Foundation
import Notes
import RecordStore

extension SyncEngine {
    /// A new note (or attachment) beside `local` holding the local values that lost a conflict
    /// (`losing`), titled `Title (conflict YYYY-MM-DD HOST)` (an attachment `photo.jpg` is named
    /// `photo (conflict YYYY-MM-DD HOST).jpg`); its other fields are the merged record's.
    func makeConflictCopy(of local: Record, merged: RecordPayload, losing: [String: FieldValue]) -> (record: Record, entry: ConflictCopy) {
        let now = Date()
        let key = local.recordType == Attachment.recordType ? FieldName.name : FieldName.title
        let name = merged.fields[key]?.stringValue ?? local[key]?.stringValue ?? "Untitled"
        let title = ConflictName.name(name, keepsExtension: key == FieldName.name, date: now, host: state.host)
        var copy = Record(recordType: local.recordType)
        for (key, value) in merged.fields.merging(losing, uniquingKeysWith: { _, losing in losing }) { copy[key] = value }
        if losing[FieldName.content] == nil, losing[FieldName.text] != nil { copy[FieldName.content] = nil }
        copy[key] = .string(title)
        copy.modificationDate = local.modificationDate ?? now
        let entry = ConflictCopy(recordName: local.recordID.recordName, copyRecordName: copy.recordID.recordName, title: title, date: now)
        return (copy, entry)
    }
}
