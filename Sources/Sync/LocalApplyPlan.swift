import Foundation
import Notes
import RecordStore

/// The local writes one page of server changes turns into, committed by one `modify`.
struct LocalApplyPlan {
    /// Records to save, by name, with the server version each came from (nil for local-only
    /// saves: conflict copies, rescued records, the Recovered folder).
    var saves: [String: (record: Record, server: ServerRecord?, pending: Bool)] = [:]
    /// Records to delete locally (the server deleted them and nothing changed here).
    var deletes: Set<String> = []
    /// New sync states by name; `.some(nil)` removes a record's state.
    var states: [String: SyncedRecord?] = [:]
    /// Conflict copies to create.
    var copies: [(record: Record, entry: ConflictCopy)] = []

    mutating func save(_ record: Record, server: ServerRecord?, pending: Bool) {
        saves[record.recordID.recordName] = (record, server, pending)
    }
}

extension SyncEngine {
    /// The record name of the folder that takes in records whose folder was deleted while they were
    /// being edited; the same on every machine, so that they all share one.
    static let recoveredFolderName = "notesfs-recovered"

    /// Commits a plan: rescues the locally edited records a delete would cascade to, points
    /// records whose folder is gone at `Recovered`, runs one `modify`, then records the new states.
    ///
    /// - Throws: ``SyncError/store(_:)`` (`serverRecordChanged` when a local edit raced it).
    func commit(_ plan: inout LocalApplyPlan) throws(SyncError) {
        for rescued in try rescuedRecords(deleting: plan.deletes, plan: plan) { plan.save(rescued, server: nil, pending: true) }
        for copy in plan.copies { plan.save(copy.record, server: nil, pending: true) }
        var needsRecovered = false
        for (name, save) in plan.saves {
            var record = save.record
            var moved = false
            for key in ["folder", "parent"] {
                guard let target = record[key]?.referenceValue?.recordID else { continue }
                let exists =
                    (database.metadata(for: target) != nil || plan.saves[target.recordName] != nil)
                    && !plan.deletes.contains(target.recordName)
                if !exists {
                    record.setReference(key, to: RecordID(recordName: Self.recoveredFolderName))
                    needsRecovered = true
                    moved = true
                }
            }
            plan.saves[name]?.record = record
            // The server's version still points at the folder that is gone: the move is pushed, or
            // a machine that still holds the folder would lose the record when the folder's delete
            // reaches it.
            if moved { plan.saves[name]?.pending = true }
        }
        if needsRecovered, database.metadata(for: RecordID(recordName: Self.recoveredFolderName)) == nil,
            plan.saves[Self.recoveredFolderName] == nil
        {
            var folder = Record(recordType: "Folder", recordID: RecordID(recordName: Self.recoveredFolderName))
            folder["name"] = .string("Recovered")
            plan.save(folder, server: nil, pending: true)
        }
        let deletes = plan.deletes.filter { database.metadata(for: RecordID(recordName: $0)) != nil }.sorted()
        guard !plan.saves.isEmpty || !deletes.isEmpty || !plan.states.isEmpty else { return }
        let result: ModifyResult
        do {
            result = try database.modify(
                saving: plan.saves.values.map(\.record), deleting: deletes.map(RecordID.init(recordName:)),
                savePolicy: .ifServerRecordUnchanged)
        } catch { throw .store(error) }
        for (name, synced) in plan.states { state.records[name] = synced }
        for id in result.deletedRecordIDs { state.records[id.recordName] = nil }
        for saved in result.savedRecords {
            guard let server = plan.saves[saved.recordID.recordName]?.server, let payload = server.payload else { continue }
            let pending = plan.saves[saved.recordID.recordName]?.pending ?? true
            state.records[saved.recordID.recordName] = SyncedRecord(
                recordType: saved.recordType, serverSeq: server.seq, localTag: pending ? nil : saved.recordChangeTag,
                base: payload.jsonText)
        }
        state.conflicts += plan.copies.map(\.entry)
    }

    /// The locally edited records that deleting `names` would cascade to, moved to `Recovered`
    /// (an edit beats a delete); their subtrees move with them.
    private func rescuedRecords(deleting names: Set<String>, plan: LocalApplyPlan) throws(SyncError) -> [Record] {
        var rescued: [Record] = []
        var queue = Array(names)
        var seen = names
        while let target = queue.popLast() {
            for key in ["folder", "parent"] {
                for child in database.referrers(to: RecordID(recordName: target), key: key) {
                    let name = child.recordID.recordName
                    guard plan.saves[name] == nil, seen.insert(name).inserted else { continue }
                    if child.record.recordChangeTag != state.records[name]?.localTag, var record = try localRecord(name) {
                        record.setReference(key, to: RecordID(recordName: Self.recoveredFolderName))
                        rescued.append(record)
                    } else {
                        queue.append(name)
                    }
                }
            }
        }
        return rescued
    }
}
