import Foundation
import Notes
import RecordStore

extension SyncEngine {
    /// Fetches every server change since ``SyncState/serverSeq`` page by page and applies each
    /// page locally in one `modify`; the state (the new seq, the new bases) is saved after each.
    /// A push or a page applied before a crash that kept its state from being saved is recovered
    /// first (``recoverUnrecordedPush()``, ``recoverUnrecordedApply()``). A row this notesfs
    /// cannot read or apply is set aside (``SyncState/setAside``) and the rest of its page applies.
    ///
    /// - Throws: ``SyncError``.
    func pull(_ report: inout SyncReport) throws(SyncError) {
        try recoverUnrecordedPush()
        try recoverUnrecordedApply()
        // A push lost to a version this client had fetched past (its seq is not after the saved
        // one): no page brings it again, so fetch it by name.
        if !conflicted.isEmpty {
            let names = conflicted
            conflicted = []
            try applyAgain(named: names, &report)
        }
        // Records lost to local damage (dropped by `fsck --repair`): the server's versions again.
        if !state.lost.isEmpty {
            let names = state.lost
            state.lost = []
            refetching = names
            defer { refetching = [] }
            try applyAgain(named: names, &report)
        }
        // Rows summarised by an older reader: read again from the lowest seq among them.
        let older = state.setAsideSummaries.values.filter { $0.reader < RecordPayload.readerVersion }
        if let lowest = older.map(\.lowestSeq).min() {
            state.serverSeq = min(state.serverSeq, max(lowest, 1) - 1)
            state.setAsideSummaries = [:]
        }
        var moved = SyncProgress(direction: .down, records: 0, total: 0, bytes: 0)
        if progress != nil { moved.total = try container.count(after: state.serverSeq) }
        while true {
            let page = refusingReplays(try container.changes(after: state.serverSeq, limit: batchSize))
            guard let last = page.lastSeq else { break }
            try applyRetrying(page, &report)
            state.serverSeq = max(state.serverSeq, last)
            try state.save(databasePath: database.path)
            moved.records += page.records.count + page.unreadable.count
            moved.bytes += page.payloadBytes
            progress?(moved)
        }
        // Bases kept through a reset that no server record confirmed: the server lacks those
        // records, which are pushed as new.
        if state.unconfirmedBases {
            for name in state.records.keys where state.records[name]?.serverSeq == SyncedRecord.unconfirmedSeq {
                state.records[name] = nil
            }
            state.unconfirmedBases = false
            try state.save(databasePath: database.path)
        }
        // Rows set aside by an older reader, or for a record that was missing and may have come
        // since: fetched by name, as no page brings them again.
        let retried = state.setAside.values.filter { $0.reader < RecordPayload.readerVersion || $0.awaitsRecord }
        if !retried.isEmpty { try applyAgain(named: Set(retried.map(\.recordName)), &report) }
    }

    /// Fetches the server's versions of `names` that this client has fetched past, and applies them.
    private func applyAgain(named names: Set<String>, _ report: inout SyncReport) throws(SyncError) {
        var page = refusingReplays(try container.records(named: names.sorted()), named: true)
        page.records.removeAll { $0.seq > state.serverSeq }
        page.unreadable.removeAll { $0.seq > state.serverSeq }
        try applyRetrying(page, &report)
        try state.save(databasePath: database.path)
    }

    /// `page` with the rows an encrypted server sent again set aside: a sealed row binds its seq,
    /// so an old version sent again comes with its old seq. In a page of changes, that is a seq
    /// this machine has fetched past; fetched by name (`named`), a seq below the version this
    /// machine holds of the record. (On a readable server seqs prove nothing: the page is as sent.)
    private func refusingReplays(_ page: ServerPage, named: Bool = false) -> ServerPage {
        guard container.cipher != nil else { return page }
        var checked = page
        checked.records = []
        for record in page.records {
            let known = named ? state.records[record.recordName]?.serverSeq ?? 0 : state.serverSeq
            guard named ? record.seq < known : record.seq <= known else {
                checked.records.append(record)
                continue
            }
            checked.unreadable.append(
                UnreadableServerRecord(
                    recordName: record.recordName, recordType: record.recordType, seq: record.seq,
                    reason: "an older version (\(record.seq)) than the one this machine has seen (\(known)), sent again by the"
                        + " server: a replay, set aside (the local record is kept as it is)"))
        }
        return checked
    }

    /// ``apply(_:_:)``, again when a local edit (the mount, the CLI) raced its modify.
    private func applyRetrying(_ page: ServerPage, _ report: inout SyncReport) throws(SyncError) {
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
    /// locally, merges where both changed, keeps a local edit over a server delete. The folders the
    /// page's records sit in that this database lacks are fetched from the server first (a later
    /// page would bring them), so that no record waits in `Recovered` for a folder still to come.
    private func apply(_ page: ServerPage, _ report: inout SyncReport) throws(SyncError) {
        var plan = LocalApplyPlan()
        let rows = try withMissingFolders(page)
        for unreadable in rows.unreadable { plan.setAside(unreadable, awaitsRecord: false) }
        let now = Date()
        for var server in rows.records {
            let name = server.recordName
            var synced = state.records[name]
            if let kept = synced, kept.serverSeq == SyncedRecord.unconfirmedSeq {
                synced = try confirmedAfterReset(kept, server: server)
            }
            if synced?.serverSeq == server.seq {  // already ours (pushed by this client)
                plan.applied(server)
                continue
            }
            if name == AppliedPageMarker.recordName || server.recordType == AppliedPageMarker.recordType {
                plan.setAside(server, reason: "a record name or type this notesfs keeps for its own bookkeeping")
                continue
            }
            let local = try localRecord(name)
            if let local, local.recordType != server.recordType {
                // A name clash or a hostile row: never overwrite a record of another type.
                plan.setAside(
                    server, reason: "the server's version is a \(server.recordType), the local record a \(local.recordType) (kept)")
                continue
            }
            if let payload = server.payload, let tag = pushedTag(server.origin), !refetching.contains(name) {
                // This client pushed this version before a crash kept it from saving the state: the
                // local record is that version, or a later edit or delete of it still to push.
                plan.states[name] = SyncedRecord(
                    recordType: server.recordType, serverSeq: server.seq, localTag: tag, base: payload.jsonText)
                plan.applied(server)
                continue
            }
            if let payload = server.payload {
                let clamped = ServerValueRules.clamped(payload, now: now)
                server.payload = clamped.payload
                if !clamped.changes.isEmpty { plan.clamped.append("\(name): " + clamped.changes.joined(separator: ", ")) }
            }
            // The server's version as a local record; the notes layer must read it too (a `folder`
            // that is a reference, a `title` that is a string).
            let incoming = server.payload.map {
                (local ?? Record(recordType: server.recordType, recordID: RecordID(recordName: name))).updated(to: $0)
            }
            if let payload = server.payload, let incoming {
                if let problem = NotesRecords.validityProblem(of: incoming) ?? ServerValueRules.problem(of: incoming, in: database) {
                    plan.setAside(server, reason: problem)
                    continue
                }
                do { try fetchAssets(of: payload) } catch {
                    // Missing or damaged on the server (its owner may push it again): set aside, not a stop.
                    guard case .damagedServerRecord(_, let reason) = error else { throw error }
                    plan.setAside(server, reason: reason, awaitsRecord: true)
                    continue
                }
            }
            let localEdited = local != nil && local?.recordChangeTag != synced?.localTag
            report.fetched += 1
            plan.applied(server)
            guard let payload = server.payload, let incoming else {
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
            if let local, localEdited {
                let base = synced.flatMap { try? RecordPayload(jsonText: $0.base, recordName: name) }
                let merge = RecordMerge(base: base, local: RecordPayload(local), server: payload, recordType: server.recordType)
                plan.save(local.updated(to: merge.payload), server: server, pending: merge.payload != payload)
                plan.mergeReasons[name] = merge.losingLocalFields.isEmpty ? ModifyReason.merge : ModifyReason.conflict
                // Note history keeps both states a merge came from: the local one (the commit's
                // version of what it replaces) and the server's, unless the merge took it whole (a
                // conflict's server state is the note itself, its local one the conflict copy).
                if merge.losingLocalFields.isEmpty, VersionPolicy.versionedTypes.contains(server.recordType), merge.payload != payload {
                    plan.save(Version(of: incoming, kind: .merge).record, server: nil, pending: true)
                }
                report.merged += 1
                for (key, values) in merge.decidedFields.sorted(by: { $0.key < $1.key }) {
                    plan.decided.append(
                        DecidedConflict(
                            recordName: name, recordType: server.recordType, key: key, kept: Self.shown(values.kept),
                            dropped: Self.shown(values.dropped), date: Date()))
                }
                if !merge.losingLocalFields.isEmpty {
                    let copy = makeConflictCopy(of: local, merged: merge.payload, losing: merge.losingLocalFields)
                    plan.copies.append(copy)
                }
            } else {
                // No local edit, or a local delete that the server's newer edit beats: take the server's.
                plan.save(incoming, server: server, pending: false)
            }
        }
        setAsideMissingReferences(&plan)
        setAsideLinksNoLinkMayMake(&plan)
        try commit(&plan, through: rows.lastSeq ?? state.serverSeq)
        for entry in plan.setAside.values.sorted(by: { $0.seq < $1.seq }) {
            if state.setAside[entry.recordName] != entry { report.setAside.append(entry) }
            state.keepSetAside(entry)
        }
        for (name, seq) in plan.appliedSeqs where (state.setAside[name]?.seq ?? .max) <= seq && plan.setAside[name] == nil {
            state.setAside[name] = nil
        }
        for clamped in plan.clamped {
            report.notices.append("server record \(clamped)")
            state.clamped.append(clamped)
        }
        state.clamped = Array(state.clamped.suffix(SyncState.clampedLimit))
        report.conflictCopies += plan.copies.map(\.entry)
        report.decided += plan.decided
        state.decided = Array((state.decided + plan.decided).suffix(SyncState.decidedLimit))
    }

    /// The base to merge `server` with, for a record whose base `kept` was kept through a reset of
    /// the server: `kept` when the server's record is that very version (a note edited here since
    /// merges cleanly), nil otherwise (merged with no base: whichever side is newer cannot be
    /// told, so both are kept). Its seq stays unconfirmed: the apply records the server's.
    func confirmedAfterReset(_ kept: SyncedRecord, server: ServerRecord) throws(SyncError) -> SyncedRecord? {
        guard let payload = server.payload, try kept.base == payload.jsonText else { return nil }
        return kept
    }

    /// A field value as `sync status` shows it: a string's text, else its description.
    static func shown(_ value: FieldValue?) -> String {
        guard let value else { return "(none)" }
        if let text = value.stringValue { return text }
        if let reference = value.referenceValue { return reference.recordID.recordName }
        return "\(value)"
    }

    /// `page` with the live server versions of the folders its records (and those folders) sit in
    /// that neither this database nor the page holds, up to ``folderFetchRounds`` levels up.
    private func withMissingFolders(_ page: ServerPage) throws(SyncError) -> ServerPage {
        var rows = page
        var known = Set(page.records.map(\.recordName))
        var newcomers = page.records
        for _ in 0..<Self.folderFetchRounds {
            var wanted = Set<String>()
            for server in newcomers {
                for key in [FieldName.folder, FieldName.parent] {
                    guard let target = server.payload?.fields[key]?.referenceValue?.recordID.recordName,
                        !known.contains(target), database.metadata(for: RecordID(recordName: target)) == nil
                    else { continue }
                    wanted.insert(target)
                }
            }
            guard !wanted.isEmpty else { break }
            let fetched = try container.records(named: wanted.sorted())
            newcomers = fetched.records.filter { $0.payload != nil }
            rows.records += newcomers
            rows.unreadable += fetched.unreadable
            known.formUnion(wanted)
        }
        return rows
    }

    /// How many levels of missing folders ``apply(_:_:)`` fetches ahead of their pages.
    static let folderFetchRounds = 64

    /// Takes out of `plan` the saves that hold a reference (other than to their folder, which
    /// `Recovered` stands in for) to a record that neither this database nor the plan holds, and
    /// sets them aside until it arrives: the store refuses such a save, and one must not stop the page.
    private func setAsideMissingReferences(_ plan: inout LocalApplyPlan) {
        var removed = true
        while removed {  // a save taken out may be what another one references
            removed = false
            for name in plan.saves.keys.sorted() { removed = setAsideIfReferencingMissing(name, &plan) || removed }
        }
    }

    /// Whether the save of `name` was taken out of `plan` (see ``setAsideMissingReferences(_:)``).
    private func setAsideIfReferencingMissing(_ name: String, _ plan: inout LocalApplyPlan) -> Bool {
        guard let save = plan.saves[name] else { return false }
        for (key, value) in save.record.fields where key != FieldName.folder && key != FieldName.parent {
            var missing: String?
            value.forEachReference { reference in
                let target = reference.recordID
                if missing == nil, database.metadata(for: target) == nil, plan.saves[target.recordName] == nil {
                    missing = target.recordName
                }
            }
            guard let missing else { continue }
            plan.saves[name] = nil
            if let server = save.server {
                plan.setAside(server, reason: "field \(key) references record \(missing), which is missing", awaitsRecord: true)
            }
            return true
        }
        return false
    }

    /// Takes out of `plan` the server's `Link` records that name themselves or a record no hard
    /// link may name (``Notes/Link/targetTypes``: not a folder, not another link), and sets them
    /// aside: the mount could not show them and fsck would report them on every machine.
    private func setAsideLinksNoLinkMayMake(_ plan: inout LocalApplyPlan) {
        for (name, save) in plan.saves where save.record.recordType == Link.recordType {
            guard let server = save.server, let target = save.record[FieldName.target]?.referenceValue?.recordID else { continue }
            let targetType = plan.saves[target.recordName]?.record.recordType ?? database.metadata(for: target)?.recordType
            let problem: String? =
                if target.recordName == name {
                    "a hard link to itself"
                } else if let targetType, !Link.targetTypes.contains(targetType) {
                    "a hard link to a \(targetType) record (\(target.recordName))"
                } else {
                    nil
                }
            guard let problem else { continue }
            plan.saves[name] = nil
            plan.setAside(server, reason: problem)
        }
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

    /// Downloads the assets of `payload` this database does not hold yet (their hashes passed the
    /// store's checks when the payload was decoded: each names a file under `assets/` and nothing else).
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
