import Foundation
import RecordStore

/// A local record, saved by the very `modify` that applies a page of server changes, naming the
/// server version each saved record came from: after a crash between that `modify` and the save
/// of the sync state recording it, the next sync knows that those local records *are* those
/// server versions (or later edits of them), so their merge base is the server's payload it
/// fetches again, and a later local edit wins without a conflict copy.
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
    /// Record name → that version's payload (``RecordPayload/jsonText``): the merge base when
    /// the server has a newer version by the next sync and the record was edited here since.
    var bases: [String: String] = [:]

    /// The marker as a record to save over `existing` (the marker saved before, if any).
    func record(over existing: Record?) -> Record {
        var record = existing ?? Record(recordType: Self.recordType, recordID: RecordID(recordName: Self.recordName))
        record["through"] = .int64(through)
        record["applied"] = .string(applied.map { "\($0.value) \($0.key)" }.sorted().joined(separator: "\n"))
        let encoded = (try? JSONSerialization.data(withJSONObject: bases, options: [.sortedKeys])) ?? Data("{}".utf8)
        record["bases"] = .string(String(decoding: encoded, as: UTF8.self))
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
        let text = record["bases"]?.stringValue ?? "{}"
        bases = ((try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: String]) ?? [:]
    }

    init(through: Int64, applied: [String: Int64], bases: [String: String]) {
        self.through = through
        self.applied = applied
        self.bases = bases
    }
}

/// What the last applied page saved, when the state does not record that page as fetched (a
/// crash came between): the server version of each record, and the local change tag of the
/// commit that saved them all (a record that still has it was not changed since).
struct UnrecordedApply {
    var versions: [String: Int64] = [:]
    /// The payloads of those versions, by record name (``AppliedPageMarker/bases``).
    var bases: [String: String] = [:]
    var tag: String?

    /// Whether `local` is still exactly what that apply saved for it.
    func unchangedSinceApply(_ local: Record?) -> Bool {
        guard let local, let tag, versions[local.recordID.recordName] != nil else { return false }
        return local.recordChangeTag == tag
    }
}

extension SyncEngine {
    /// The last applied page's ``UnrecordedApply``; empty when the state records that page.
    func unrecordedApply() throws(SyncError) -> UnrecordedApply {
        guard let record = try localRecord(AppliedPageMarker.recordName), let marker = AppliedPageMarker(record),
            marker.through > state.serverSeq
        else { return UnrecordedApply() }
        return UnrecordedApply(versions: marker.applied, bases: marker.bases, tag: record.recordChangeTag)
    }
}
