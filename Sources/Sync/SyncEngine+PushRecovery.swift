import Foundation

extension SyncEngine {
    /// After a crash between a push transaction and the save of the state recording it (a
    /// ``PushIntent`` is left): asks the server which of the intent's changes that transaction
    /// saved, if it committed, and records each as a successful push would have — the pushed
    /// version as the record's merge base at its seq and local tag (a record edited here since
    /// keeps another tag, so it stays pending), a pushed delete as no longer synced — then saves
    /// the state, forgets the push's key on the server and removes the intent. An intent whose
    /// push did not commit changes nothing: its records are still pending.
    ///
    /// Done before anything is fetched or pushed. A record whose state was saved at that version
    /// or later is left as it is, so a second crash before the intent is removed recovers the same again.
    ///
    /// - Throws: ``SyncError/server(_:)``, ``SyncError/state(path:reason:)``.
    func recoverUnrecordedPush() throws(SyncError) {
        guard FileManager.default.fileExists(atPath: PushIntent.path(forDatabase: database.path)) else { return }
        guard let intent = PushIntent.load(databasePath: database.path) else {
            try PushIntent.remove(databasePath: database.path)
            return
        }
        let seqs = try container.committedPush(intent.key, of: intent.changes.map(\.recordName))
        var recovered = false
        for change in intent.changes {
            guard let seq = seqs[change.recordName] else { continue }  // not saved: still pending
            let synced = state.records[change.recordName]
            if let synced, synced.serverSeq >= seq { continue }  // its state was saved
            if let payload = change.payload {
                state.records[change.recordName] = SyncedRecord(
                    recordType: change.recordType, serverSeq: seq, localTag: change.localTag, base: payload)
            } else {
                guard synced != nil else { continue }
                state.records[change.recordName] = nil
            }
            recovered = true
        }
        if recovered { try state.save(databasePath: database.path) }
        if !seqs.isEmpty { try container.forgetPush(intent.key) }
        try PushIntent.remove(databasePath: database.path)
    }
}
