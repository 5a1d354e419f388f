import Foundation
import RecordStore

/// A local record, saved by the very `modify` that applies a page of server changes, naming the
/// server version each saved record came from, with its payload and type: after a crash between
/// that `modify` and the save of the sync state recording it, the next sync records those
/// versions as the records' merge bases before it fetches anything
/// (``SyncEngine/recoverUnrecordedApply()``), so that a later edit on either side (or both)
/// merges against the version both sides last agreed on.
///
/// It is this machine's own bookkeeping: never pushed (``PendingChanges``), shown by no mount
/// (a type no folder lists), and rewritten by every page applied.
struct AppliedPageMarker {
    static let recordType = "SyncAppliedPage"
    static let recordName = "notesfs-sync-applied-page"

    /// The page's last server seq: the marker describes a page the state does not record as
    /// fetched when this is above ``SyncState/serverSeq``.
    var through: Int64
    /// Record name → the server seq of the version the page saved it from.
    var applied: [String: Int64]
    /// Record name → that version's payload (``RecordPayload/jsonText``).
    var bases: [String: String] = [:]
    /// Record name → that version's record type.
    var types: [String: String] = [:]

    /// The marker as a record to save over `existing` (the marker saved before, if any).
    func record(over existing: Record?) -> Record {
        var record = existing ?? Record(recordType: Self.recordType, recordID: RecordID(recordName: Self.recordName))
        record["through"] = .int64(through)
        record["applied"] = .string(applied.map { "\($0.value) \($0.key)" }.sorted().joined(separator: "\n"))
        record["bases"] = .string(Self.encode(bases))
        record["types"] = .string(Self.encode(types))
        return record
    }

    /// The marker in `record`; nil when it is not one (or is damaged: then it is simply not used).
    init?(_ record: Record) {
        guard record.recordType == Self.recordType, let through = record["through"]?.int64Value else { return nil }
        var applied: [String: Int64] = [:]
        for line in (record["applied"]?.stringValue ?? "").split(separator: "\n") {
            guard let space = line.firstIndex(of: " "), let seq = Int64(line[..<space]) else { continue }
            applied[String(line[line.index(after: space)...])] = seq
        }
        self.through = through
        self.applied = applied
        bases = Self.decode(record["bases"]?.stringValue)
        types = Self.decode(record["types"]?.stringValue)
    }

    init(through: Int64, applied: [String: Int64], bases: [String: String], types: [String: String]) {
        self.through = through
        self.applied = applied
        self.bases = bases
        self.types = types
    }

    /// A string dictionary as JSON (sorted keys).
    private static func encode(_ dictionary: [String: String]) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: dictionary, options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    /// The string dictionary in JSON `text`; empty when there is none or it is damaged.
    private static func decode(_ text: String?) -> [String: String] {
        ((try? JSONSerialization.jsonObject(with: Data((text ?? "{}").utf8))) as? [String: String]) ?? [:]
    }
}

extension SyncEngine {
    /// After a crash between the apply of a page and the save of the state recording it (the
    /// marker names a page past ``SyncState/serverSeq``): records in the state, and saves, the
    /// server version that apply saved of each record as its merge base — synced, when the local
    /// record still has exactly that version's fields; to push, when it differs (the apply saved
    /// a merge, or it was edited or deleted here since).
    ///
    /// Done once, before the pull fetches again from the saved server seq: the re-fetched pages
    /// then skip what the server still has at that version and merge what the server changed
    /// since against it, whichever page brings it (each page's commit writes a marker of its own,
    /// so the marker cannot be consulted page by page). A record whose state was saved before the
    /// crash (its record file is at that version or later) is left as it is, so a second crash
    /// before a page's commit recovers the same again.
    ///
    /// - Throws: ``SyncError/store(_:)``, ``SyncError/state(path:reason:)``.
    func recoverUnrecordedApply() throws(SyncError) {
        guard let record = try localRecord(AppliedPageMarker.recordName), let marker = AppliedPageMarker(record),
            marker.through > state.serverSeq
        else { return }
        var recovered = false
        for (name, seq) in marker.applied.sorted(by: { $0.key < $1.key }) {
            let synced = state.records[name]
            if let synced, synced.serverSeq >= seq { continue }  // its record file was saved
            let local = try localRecord(name)
            // A marker without the version's payload (damaged, or from an older notesfs) recovers
            // nothing of it: the page merges it as before, keeping both on a conflict.
            guard let base = marker.bases[name], let payload = try? RecordPayload(jsonText: base, recordName: name),
                let recordType = marker.types[name] ?? synced?.recordType ?? local?.recordType
            else { continue }
            if let local, local.recordType != recordType { continue }  // not the record that apply saved
            let unchanged = local.map { $0.fields == payload.fields } ?? false
            state.records[name] = SyncedRecord(
                recordType: recordType, serverSeq: seq, localTag: unchanged ? local?.recordChangeTag : nil, base: base)
            recovered = true
        }
        if recovered { try state.save(databasePath: database.path) }
    }
}
