import Foundation
import RecordStore

extension SyncEngine {
    /// Fetches every server change since ``SyncState/serverSeq`` page by page and applies each
    /// page locally in one `modify`; the state (the new seq, the new bases) is saved after each.
    /// A push or a page applied before a crash that kept its state from being saved is recovered
    /// first (``recoverUnrecordedPush()``, ``recoverUnrecordedApply()``).
    ///
    /// - Throws: ``SyncError``.
    func pull(_ report: inout SyncReport) throws(SyncError) {
        try recoverUnrecordedPush()
        try recoverUnrecordedApply()
        if !conflicted.isEmpty {
            // A push lost to a version this client had fetched past (its seq is not after the
            // saved one), so no page brings it again: fetch those records by name.
            let names = conflicted.sorted()
            conflicted = []
            let missed = try container.records(named: names).filter { $0.seq <= state.serverSeq }
            if !missed.isEmpty {
                try applyRetrying(missed, &report)
                try state.save(databasePath: database.path)
            }
        }
        while true {
            let page = try container.changes(after: state.serverSeq, limit: batchSize)
            guard let last = page.last else { return }
            try applyRetrying(page, &report)
            state.serverSeq = last.seq
            try state.save(databasePath: database.path)
        }
    }

    /// ``apply(_:_:)``, again when a local edit (the mount, the CLI) raced its modify.
    private func applyRetrying(_ page: [ServerRecord], _ report: inout SyncReport) throws(SyncError) {
        var attempts = 0
        while true {
            var pageReport = report
            do {
                try apply(page, &pageReport)
                report = pageReport
                return
            } catch {
                guard case .store(.serverRecordChanged(_, _)) = error, attempts < 3 else { throw error }
                attempts += 1
            }
        }
    }

    /// Applies one page of server changes: takes the server's version where nothing changed
    /// locally, merges where both changed, keeps a local edit over a server delete.
    private func apply(_ page: [ServerRecord], _ report: inout SyncReport) throws(SyncError) {
        var plan = LocalApplyPlan()
        for server in page {
            let name = server.recordName
            let synced = state.records[name]
            if synced?.serverSeq == server.seq { continue }  // already ours (pushed by this client)
            let local = try localRecord(name)
            if let local, local.recordType != server.recordType { continue }  // a name clash: never overwrite another type
            if let payload = server.payload, let tag = pushedTag(server.origin) {
                // This client pushed this version before a crash kept it from saving the state: the
                // local record is that version, or a later edit or delete of it still to push.
                plan.states[name] = SyncedRecord(
                    recordType: server.recordType, serverSeq: server.seq, localTag: tag, base: payload.jsonText)
                continue
            }
            let localEdited = local != nil && local?.recordChangeTag != synced?.localTag
            report.fetched += 1
            guard let payload = server.payload else {
                if let local, localEdited {
                    // An edit beats a delete: keep the record; the push recreates it over the tombstone.
                    plan.states[name] = SyncedRecord(
                        recordType: local.recordType, serverSeq: server.seq, localTag: nil, base: RecordPayload(local).jsonText)
                } else {
                    if local != nil { plan.deletes.insert(name) }
                    plan.states[name] = .some(nil)
                }
                continue
            }
            try fetchAssets(of: payload)
            if let local, localEdited {
                let base = try synced.map { (synced) throws(SyncError) in try RecordPayload(jsonText: synced.base, recordName: name) }
                let merge = RecordMerge(base: base, local: RecordPayload(local), server: payload, recordType: server.recordType)
                plan.save(local.updated(to: merge.payload), server: server, pending: merge.payload != payload)
                report.merged += 1
                if !merge.losingLocalFields.isEmpty {
                    let copy = makeConflictCopy(of: local, merged: merge.payload, losing: merge.losingLocalFields)
                    plan.copies.append(copy)
                }
            } else {
                // No local edit, or a local delete that the server's newer edit beats: take the server's.
                let record = local ?? Record(recordType: server.recordType, recordID: RecordID(recordName: name))
                plan.save(record.updated(to: payload), server: server, pending: false)
            }
        }
        try commit(&plan, through: page.map(\.seq).max() ?? state.serverSeq)
        report.conflictCopies += plan.copies.map(\.entry)
    }

    /// The whole local record named `name`, nil when there is none.
    func localRecord(_ name: String) throws(SyncError) -> Record? {
        let id = RecordID(recordName: name)
        guard database.metadata(for: id) != nil else { return nil }
        do { return try database.record(for: id) } catch {
            if case .unknownItem = error { return nil }
            throw .store(error)
        }
    }

    /// Downloads the assets of `payload` this database does not hold yet.
    private func fetchAssets(of payload: RecordPayload) throws(SyncError) {
        for asset in payload.fields.values.flatMap(\.assets) where !FileManager.default.fileExists(atPath: database.assetPath(asset)) {
            try container.download(asset, into: database)
        }
    }
}

extension Record {
    /// This record with exactly the fields and modification date of `payload`.
    func updated(to payload: RecordPayload) -> Record {
        var record = self
        for key in record.fields.keys where payload.fields[key] == nil { record[key] = nil }
        for (key, value) in payload.fields where record.fields[key] != value { record[key] = value }
        if let date = payload.modificationDate { record.modificationDate = date }
        if let date = payload.creationDate { record.setCreationDate(date) }
        return record
    }
}
