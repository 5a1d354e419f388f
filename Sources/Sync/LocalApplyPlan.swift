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
    /// The records a merge saves, by name, with what note history calls it (``ModifyReason/merge``,
    /// or ``ModifyReason/conflict`` when a conflict copy took the local side): the version each
    /// replaces is kept. Every other save of a page keeps none (``ModifyReason/sync``).
    var mergeReasons: [String: String] = [:]
    /// Fields both sides changed, decided by the later edit.
    var decided: [DecidedConflict] = []
    /// Server rows set aside by this page, by name (``SyncState/setAside`` once committed).
    var setAside: [String: SetAsideRecord] = [:]
    /// The server values this page applied clamped (``ServerValueRules/clamped(_:now:)``), as
    /// the user is told them: "record name: what".
    var clamped: [String] = []
    /// The server version of every record this page applied or found already applied, by name:
    /// an earlier version of it set aside is set aside no longer.
    var appliedSeqs: [String: Int64] = [:]

    mutating func save(_ record: Record, server: ServerRecord?, pending: Bool) {
        saves[record.recordID.recordName] = (record, server, pending)
    }

    mutating func applied(_ server: ServerRecord) {
        appliedSeqs[server.recordName] = max(appliedSeqs[server.recordName] ?? server.seq, server.seq)
    }

    /// Sets aside a row that could not be read.
    mutating func setAside(_ row: UnreadableServerRecord, awaitsRecord: Bool) {
        setAside[row.recordName] = SetAsideRecord(
            recordName: row.recordName, recordType: row.recordType, seq: row.seq, reason: row.reason,
            reader: RecordPayload.readerVersion, since: Date(), awaitsRecord: awaitsRecord)
    }

    /// Sets aside a row that was read and cannot be applied.
    mutating func setAside(_ server: ServerRecord, reason: String, awaitsRecord: Bool = false) {
        setAside(
            UnreadableServerRecord(recordName: server.recordName, recordType: server.recordType, seq: server.seq, reason: reason),
            awaitsRecord: awaitsRecord)
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
    func commit(_ plan: inout LocalApplyPlan, through pageSeq: Int64) throws(SyncError) {
        let (rescued, doomed) = try rescuedRecords(deleting: plan.deletes, plan: plan)
        for record in rescued { plan.save(record, server: nil, pending: true) }
        for copy in plan.copies { plan.save(copy.record, server: nil, pending: true) }
        let recovered = Self.recoveredFolderName
        for (name, save) in plan.saves {
            var record = save.record
            var moved = false
            for key in [FieldName.folder, FieldName.parent] {
                guard let target = record[key]?.referenceValue?.recordID else { continue }
                // A folder, not some other record a hostile row names (a note "inside" a note).
                let targetType = plan.saves[target.recordName]?.record.recordType ?? database.metadata(for: target)?.recordType
                let exists = targetType == Folder.recordType && !doomed.contains(target.recordName)
                if !exists {
                    // Recovered itself goes to the root when its parent is gone.
                    record.setReference(key, to: name == recovered ? nil : RecordID(recordName: recovered))
                    moved = true
                }
            }
            plan.saves[name]?.record = record
            // The server's version still points at the folder that is gone: the move is pushed, or
            // a machine that still holds the folder would lose the record when the folder's delete
            // reaches it.
            if moved { plan.saves[name]?.pending = true }
        }
        breakCycles(&plan, doomed: doomed)
        let usesRecovered = plan.saves.values.contains { save in
            [FieldName.folder, FieldName.parent].contains { save.record[$0]?.referenceValue?.recordID.recordName == recovered }
        }
        if usesRecovered, plan.saves[recovered] == nil,
            database.metadata(for: RecordID(recordName: recovered)) == nil || doomed.contains(recovered)
        {
            // Made, or kept from a delete (its own or its parent's) that would take the records moved into it.
            var folder = try localRecord(recovered) ?? Record(recordType: Folder.recordType, recordID: RecordID(recordName: recovered))
            folder[FieldName.name] = folder[FieldName.name] ?? .string("Recovered")
            folder.setReference(FieldName.parent, to: nil)
            plan.save(folder, server: nil, pending: true)
            plan.deletes.remove(recovered)
        }
        let deletes = plan.deletes.filter { database.metadata(for: RecordID(recordName: $0)) != nil }.sorted()
        guard !plan.saves.isEmpty || !deletes.isEmpty || !plan.states.isEmpty else { return }
        var marker = AppliedPageMarker(through: pageSeq, applied: [:], bases: [:], types: [:])
        for (name, save) in plan.saves {
            guard let server = save.server, let payload = server.payload else { continue }
            marker.applied[name] = server.seq
            marker.bases[name] = payload.jsonText
            marker.types[name] = server.recordType
        }
        let markerRecord = marker.record(over: try localRecord(AppliedPageMarker.recordName))
        let result: ModifyResult
        do {
            result = try database.modify(
                saving: plan.saves.values.map(\.record) + [markerRecord], deleting: deletes.map(RecordID.init(recordName:)),
                savePolicy: .ifServerRecordUnchanged, asExternalChange: true, reason: ModifyReason("sync", records: plan.mergeReasons))
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

    /// Keeps a folder this plan moves out of any folder inside itself: two machines that moved two
    /// folders into each other would otherwise make a cycle no path from the root reaches. Such a
    /// folder stays in (or goes back to) its local parent, else the root (also when the plan
    /// deletes that parent, one of `doomed`), and that move is pushed; the machine that meets the
    /// cycle first resolves it, and the others take its resolution.
    private func breakCycles(_ plan: inout LocalApplyPlan, doomed: Set<String>) {
        func parent(_ name: String) -> String? {
            let record = plan.saves[name]?.record ?? database.metadata(for: RecordID(recordName: name))?.record
            return record?[FieldName.parent]?.referenceValue?.recordID.recordName
        }
        func isInsideItself(_ name: String) -> Bool {
            var current = parent(name)
            var steps = 0
            while let next = current, next != name, steps < 100_000 {
                current = parent(next)
                steps += 1
            }
            return current == name
        }
        for name in plan.saves.keys.sorted() where plan.saves[name]?.record.recordType == Folder.recordType && isInsideItself(name) {
            let local = database.metadata(for: RecordID(recordName: name))?.record[FieldName.parent]?.referenceValue?.recordID
            plan.saves[name]?.record.setReference(FieldName.parent, to: local.flatMap { doomed.contains($0.recordName) ? nil : $0 })
            if isInsideItself(name) { plan.saves[name]?.record.setReference(FieldName.parent, to: nil) }
            plan.saves[name]?.pending = true
        }
    }

    /// The locally edited records that deleting `names` would cascade to, moved to `Recovered`
    /// (an edit beats a delete; their subtrees move with them), and every record the delete still
    /// takes (`names` and the rest of the cascade).
    private func rescuedRecords(deleting names: Set<String>, plan: LocalApplyPlan) throws(SyncError) -> (
        rescued: [Record], doomed: Set<String>
    ) {
        var rescued: [Record] = []
        var queue = Array(names)
        var seen = names
        while let target = queue.popLast() {
            for key in [FieldName.folder, FieldName.parent] {
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
        return (rescued, seen.subtracting(rescued.map(\.recordID.recordName)))
    }
}
