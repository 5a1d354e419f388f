import Foundation
import RecordStore

extension SyncEngine {
    /// Pushes the pending local changes in transactions of ``batchSize``, saving the state after
    /// each; returns whether every change was accepted (then the local token is saved too).
    /// A change that lost a race to another client stays pending for the next round's merge.
    ///
    /// - Throws: ``SyncError``.
    func push(_ report: inout SyncReport) throws(SyncError) -> Bool {
        let pending = try pendingChanges()
        var allSaved = true
        var saves = pending.saved[...]
        while !saves.isEmpty {
            let page = saves.prefix(batchSize)
            saves = saves.dropFirst(page.count)
            var records: [Record] = []
            for metadata in page {
                guard let record = try localRecord(metadata.recordID.recordName) else { continue }  // deleted meanwhile
                try uploadAssets(of: record)
                records.append(record)
            }
            let changes = records.map { record in
                PushChange(
                    recordName: record.recordID.recordName, recordType: record.recordType, payload: RecordPayload(record),
                    expectedSeq: state.records[record.recordID.recordName]?.serverSeq, origin: origin(tag: record.recordChangeTag))
            }
            let outcomes = try container.push(changes)
            for (record, (change, outcome)) in zip(records, zip(changes, outcomes)) {
                guard case .saved(let seq) = outcome, let payload = change.payload else {
                    allSaved = false
                    continue
                }
                state.records[change.recordName] = SyncedRecord(
                    recordType: record.recordType, serverSeq: seq, localTag: record.recordChangeTag, base: payload.jsonText)
                report.pushed += 1
            }
            try state.save(databasePath: database.path)
        }
        var deletes = pending.deleted[...]
        while !deletes.isEmpty {
            let page = deletes.prefix(batchSize)
            deletes = deletes.dropFirst(page.count)
            let changes = page.compactMap { name -> PushChange? in
                guard let synced = state.records[name] else { return nil }
                return PushChange(
                    recordName: name, recordType: synced.recordType, payload: nil, expectedSeq: synced.serverSeq,
                    origin: deleteOrigin(seq: synced.serverSeq))
            }
            let outcomes = try container.push(changes)
            for (change, outcome) in zip(changes, outcomes) {
                guard case .saved = outcome else {
                    allSaved = false
                    continue
                }
                state.records[change.recordName] = nil
                report.pushed += 1
            }
            try state.save(databasePath: database.path)
        }
        if allSaved {
            state.localToken = pending.token.stringValue
            try state.save(databasePath: database.path)
        }
        return allSaved
    }

    /// Uploads the assets of `record` the server does not hold (once per SHA-256).
    private func uploadAssets(of record: Record) throws(SyncError) {
        for asset in record.fields.values.flatMap(\.assets) {
            try container.upload(asset) { () throws(SyncError) -> Data in
                do throws(RecordStoreError) { return try database.assetData(asset) } catch { throw .store(error) }
            }
        }
    }
}
