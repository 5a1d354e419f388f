import Foundation
import Postgres
import RecordStore

extension SyncEngine {
    /// Pushes the pending local changes in transactions of ``batchSize`` records and about
    /// ``ServerContainer/pageBytes``, saving the state after each; returns whether a change lost a
    /// race to another client (it stays pending for the next round's merge). The local token is
    /// saved only when every change went through.
    ///
    /// A record that cannot be sent (its attachment file is damaged, the server refuses its values)
    /// is left out and reported in ``PushFailures`` and ``SyncReport/failures``; the others go on.
    ///
    /// Each transaction's changes are written first to a ``PushIntent`` under a new key, which the
    /// transaction writes to the server too: a crash before the state is saved is recovered by the
    /// next sync (``recoverUnrecordedPush()``). The intent is removed when the push is done.
    ///
    /// - Throws: ``SyncError``.
    func push(_ report: inout SyncReport) throws(SyncError) -> Bool {
        try recoverUnrecordedPush()  // (pull did, unless this push runs alone)
        let pending = try pendingChanges()
        let previousFailures = PushFailures.load(databasePath: database.path)
        var failures: [String: PushFailure] = [:]
        func fail(_ name: String, _ error: SyncError) {
            let reason = error.description
            let since = previousFailures[name].flatMap { $0.reason == reason ? $0.since : nil } ?? Date()
            failures[name] = PushFailure(recordName: name, reason: reason, since: since)
        }
        var lostRace = false
        let beingWritten = deferredRecords?() ?? []
        var moved = SyncProgress(direction: .up, records: 0, total: pending.count, bytes: 0)
        var saves = pending.saved[...]
        while !saves.isEmpty {
            // At most batchSize records and, but for its first record, pageBytes of them: what a
            // transaction holds in memory stays bounded whatever the notes weigh.
            var records: [Record] = []
            var taken = 0
            var bytes = 0
            for metadata in saves {
                guard taken < batchSize, bytes < ServerContainer.pageBytes else { break }
                taken += 1
                let name = metadata.recordID.recordName
                if let aside = state.setAside[name] {
                    fail(name, Self.waitingOnSetAside(aside))
                    continue
                }
                if beingWritten.contains(name) {
                    report.deferred += 1
                    continue
                }
                do {
                    guard let record = try localRecord(name) else { continue }  // deleted meanwhile
                    try uploadAssets(of: record)
                    records.append(record)
                    bytes += record.jsonSizeBound
                } catch {
                    guard error.isRecordLocal else { throw error }
                    fail(name, error)
                }
            }
            let changes = records.map { record in
                PushChange(
                    recordName: record.recordID.recordName, recordType: record.recordType, payload: RecordPayload(record),
                    expectedSeq: state.records[record.recordID.recordName]?.serverSeq, origin: origin(tag: record.recordChangeTag))
            }
            let outcomes = try pushIsolatingRefusals(changes, tags: records.map(\.recordChangeTag), fail)
            for (record, (change, outcome)) in zip(records, zip(changes, outcomes)) {
                guard let outcome else { continue }
                guard case .saved(let seq) = outcome, let payload = change.payload else {
                    lostRace = true
                    conflicted.insert(change.recordName)
                    continue
                }
                let base = payload.jsonText
                state.records[change.recordName] = SyncedRecord(
                    recordType: record.recordType, serverSeq: seq, localTag: record.recordChangeTag, base: base)
                report.pushed += 1
                moved.bytes += Int64(base.utf8.count)
            }
            saves = saves.dropFirst(taken)
            try state.save(databasePath: database.path)
            moved.records += taken
            progress?(moved)
        }
        var deletes = pending.deleted[...]
        while !deletes.isEmpty {
            let page = deletes.prefix(batchSize)
            deletes = deletes.dropFirst(page.count)
            let changes = page.compactMap { name -> PushChange? in
                if let aside = state.setAside[name] {
                    fail(name, Self.waitingOnSetAside(aside))
                    return nil
                }
                guard let synced = state.records[name] else { return nil }
                return PushChange(
                    recordName: name, recordType: synced.recordType, payload: nil, expectedSeq: synced.serverSeq,
                    origin: deleteOrigin(seq: synced.serverSeq))
            }
            let outcomes = try pushIsolatingRefusals(changes, tags: changes.map { _ in nil }, fail)
            for (change, outcome) in zip(changes, outcomes) {
                guard let outcome else { continue }
                guard case .saved = outcome else {
                    lostRace = true
                    conflicted.insert(change.recordName)
                    continue
                }
                state.records[change.recordName] = nil
                report.pushed += 1
            }
            try state.save(databasePath: database.path)
        }
        try PushIntent.remove(databasePath: database.path)  // every push it names is in the state
        try PushFailures.save(failures, databasePath: database.path)
        report.failures = failures.values.sorted { $0.recordName < $1.recordName }
        if !lostRace, failures.isEmpty, report.deferred == 0 {
            state.localToken = pending.token.stringValue
            try state.save(databasePath: database.path)
        }
        return !lostRace
    }

    /// Pushes `changes` (of the local change tags `tags`, nil for deletes) in one transaction,
    /// after writing them durably as a ``PushIntent``; when the server refuses a value of one of
    /// them (a data error, not a lost connection), pushes them one per transaction instead, under
    /// the same key, so that only the refused ones fail (reported to `fail`, their outcome nil).
    private func pushIsolatingRefusals(
        _ changes: [PushChange], tags: [String?], _ fail: (String, SyncError) -> Void
    ) throws(SyncError) -> [PushOutcome?] {
        guard !changes.isEmpty else { return [] }
        let key = PushKey(clientID: state.clientID, value: UUID.random().uuidString.lowercased())
        let intent = PushIntent(
            key: key,
            changes: zip(changes, tags).map { change, tag in
                PushIntent.Change(
                    recordName: change.recordName, recordType: change.recordType, payload: change.payload?.jsonText, localTag: tag)
            })
        try intent.save(databasePath: database.path)
        do {
            return try pushOnce(changes, key: key)
        } catch {
            guard error.isRefusedValue else { throw error }
        }
        var outcomes: [PushOutcome?] = []
        for change in changes {
            do {
                outcomes.append(try pushOnce([change], key: key).first ?? nil)
            } catch {
                guard error.isRefusedValue else { throw error }
                fail(change.recordName, error)
                outcomes.append(nil)
            }
        }
        return outcomes
    }

    /// One server transaction; moves the server token past this client's own new seqs when no
    /// other client's change came between (so the next fetch does not bring them back).
    private func pushOnce(_ changes: [PushChange], key: PushKey) throws(SyncError) -> [PushOutcome?] {
        let pushed = try container.push(changes, after: state.serverSeq, key: key)
        if let through = pushed.knownThrough { state.serverSeq = max(state.serverSeq, through) }
        return pushed.outcomes
    }

    /// Why a local change to a record whose server version is set aside is not pushed: it would
    /// replace a version this machine never merged with. It stays pending until that version applies.
    static func waitingOnSetAside(_ aside: SetAsideRecord) -> SyncError {
        .damagedServerRecord(
            aside.recordName, reason: "not pushed: the server's version \(aside.seq) is set aside (\(aside.reason)), so this change waits")
    }

    /// Uploads the assets of `record` the server does not hold (once per SHA-256).
    private func uploadAssets(of record: Record) throws(SyncError) {
        for asset in record.fields.values.flatMap(\.assets) {
            try container.upload(asset, from: database)
        }
    }
}

extension SyncError {
    /// Whether this failure concerns one local record only (its file, its asset), so the push
    /// goes on without it: anything but the server failing.
    var isRecordLocal: Bool {
        switch self {
        case .store, .damagedServerRecord: true
        case .server, .newerServerSchema, .notConfigured, .state, .encryption, .keys: false
        }
    }

    /// Whether the server refused a value of the statement (SQLSTATE class 22, data exception,
    /// or 54, program limit exceeded: a string or a jsonb too large) while the connection is fine.
    var isRefusedValue: Bool {
        guard case .server(let error) = self, error.kind == .server, let state = error.sqlState else { return false }
        return state.hasPrefix("22") || state.hasPrefix("54")
    }
}
