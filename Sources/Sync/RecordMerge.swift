import Foundation
import Notes
import RecordStore

/// A three-way merge of one record's fields: the local version and the server's against the last
/// version both agreed on (the base).
///
/// A field only one side changed takes that side's value. A field both changed differently: a
/// note's `text` is merged line by line (``TextMerge``); when that fails, or for the `content`
/// asset of a note or an attachment, the server's value stays and the local one goes to a
/// conflict copy; any other field (title, folder, mode, …) takes the local value: it reaches the
/// server after the server's, and changes are ordered by the server's sequence, never by the
/// clocks of the machines (one running a day ahead would win every change for a day).
struct RecordMerge {
    var payload: RecordPayload
    /// The local values that lost an unmergeable conflict (`text` or `content`), for a conflict copy.
    var losingLocalFields: [String: FieldValue] = [:]
    /// Other fields both sides changed differently (a rename on each machine): the value kept (the
    /// local one, last to reach the server) and the one dropped, by key, so that the user can be told.
    var decidedFields: [String: (kept: FieldValue?, dropped: FieldValue?)] = [:]

    /// Keys whose conflicting values go to a conflict copy rather than latest-wins, by record type.
    static let contentKeys: [String: Set<String>] = [
        Note.recordType: [FieldName.text, FieldName.content], Attachment.recordType: [FieldName.content],
    ]

    init(base: RecordPayload?, local: RecordPayload, server: RecordPayload, recordType: String) {
        var fields: [String: FieldValue] = [:]
        var losing: [String: FieldValue] = [:]
        var decided: [String: (kept: FieldValue?, dropped: FieldValue?)] = [:]
        let contentKeys = Self.contentKeys[recordType] ?? []
        for key in Set(local.fields.keys).union(server.fields.keys) {
            let (b, l, s) = (base?.fields[key], local.fields[key], server.fields[key])
            let value: FieldValue?
            if l == s || l == b {
                value = s
            } else if s == b {
                value = l
            } else if contentKeys.contains(key) {
                if recordType == Note.recordType, key == FieldName.text, let l = l?.stringValue, let s = s?.stringValue,
                    let merged = TextMerge.merge(base: b?.stringValue ?? "", local: l, server: s)
                {
                    value = .string(merged)
                } else {
                    value = s
                    losing[key] = l ?? .string("")
                }
            } else {
                value = l
                decided[key] = (l, s)
            }
            fields[key] = value
        }
        // A note's text and content are one thing: when one of them conflicted, the copy gets both.
        if !losing.isEmpty {
            for key in contentKeys where losing[key] == nil { losing[key] = local.fields[key] }
            losing = losing.filter { key, value in !(key == FieldName.content && value.assetValue == nil) }
        }
        let dates = [local.modificationDate, server.modificationDate].compactMap { $0 }
        let created = [local.creationDate, server.creationDate].compactMap { $0 }
        payload = RecordPayload(fields: fields, modificationDate: dates.max(), creationDate: created.min())
        losingLocalFields = losing
        decidedFields = decided
    }
}
