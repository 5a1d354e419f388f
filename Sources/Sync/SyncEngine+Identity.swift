import Foundation
import Postgres
import RecordStore

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

extension SyncEngine {
    /// Makes sure this database syncs as itself with the server it synced with, before anything
    /// is fetched or pushed:
    ///
    /// - **A copy of this database** (a clone made with `cp -a`, a backup restored, a snapshot
    ///   rolled back) shares its client ID with the original. Each sync raises a generation kept
    ///   both here and on the server (`notesfs_clients`); a server generation ahead of this one
    ///   means another copy synced since this one last did. This copy then syncs on as a new
    ///   client: what the other copy pushed is fetched as another machine's changes and merged with
    ///   the edits made here (as concurrent edits), instead of being taken for its own.
    /// - **Another server** (reset, replaced, restored from a backup of its own) has another epoch,
    ///   or hands out seqs this client has fetched past, or holds a lower generation for this
    ///   client than it was seen to hold (``SyncState/confirmedGeneration``: a restored dump, even
    ///   after another machine's pushes moved its seqs past this client's). The server's state is then started again:
    ///   every record here is pushed where the server lacks it (no deletes), everything on the
    ///   server is fetched from seq 0 and merged.
    ///
    /// Each change is said in ``SyncReport/notices``. Nothing local is lost either way.
    ///
    /// - Throws: ``SyncError/server(_:)``, ``SyncError/state(path:reason:)``.
    ///
    /// The generation is raised (and `state.json` saved before the server is told, so that the
    /// server is never ahead of the original) at an engine's first sync only; its later syncs (a
    /// mount's, at every change) just read the server's and compare.
    func checkIdentity(_ report: inout SyncReport) throws(SyncError) {
        let server = try container.identity(clientID: state.clientID)
        try checkKeys(server: server.keyIDs)
        var changed = false
        var startedOver = false
        if let epoch = server.epoch, state.serverEpoch != epoch || server.lastSeq < state.serverSeq {
            if state.serverEpoch != nil || state.serverSeq > server.lastSeq {
                try startOver()
                report.notices.append(Self.newServerNotice)
                startedOver = true
            }
            state.serverEpoch = epoch
            changed = true
        }
        // The server holds less than it was seen to hold for this client: it lost this client's
        // syncs since (restored from an older dump of itself, same epoch), and seqs this client
        // fetched past may come again with other changes. Started again, as for a reset.
        let restored = server.generation < state.confirmedGeneration
        if restored, !startedOver {
            try startOver()
            report.notices.append(Self.newServerNotice)
            changed = true
        }
        guard !generationRaised else {
            if server.generation > state.generation {
                try becomeNewClient(&report)
            } else if restored {
                _ = try container.startSync(clientID: state.clientID, generation: state.generation)
                state.confirmedGeneration = state.generation
                try state.save(databasePath: database.path)
            } else if changed {
                try state.save(databasePath: database.path)
            }
            return
        }
        let before = state.generation
        state.generation += 1
        try state.save(databasePath: database.path)  // before the server's, so the server is never ahead of the original
        if try container.startSync(clientID: state.clientID, generation: state.generation) > before {
            try becomeNewClient(&report)
        } else {
            state.confirmedGeneration = state.generation
            try state.save(databasePath: database.path)
        }
        generationRaised = true
    }

    /// This database is a copy of one that synced since: it goes on under a new client ID.
    private func becomeNewClient(_ report: inout SyncReport) throws(SyncError) {
        state.clientID = UUID.random().uuidString.lowercased()
        try PushIntent.remove(databasePath: database.path)  // the original's push, for it to recover
        conflicted = []
        try state.save(databasePath: database.path)
        _ = try container.startSync(clientID: state.clientID, generation: state.generation)
        state.confirmedGeneration = state.generation
        try state.save(databasePath: database.path)
        report.notices.append(Self.copyNotice)
    }

    /// Points `database` at its server under a new libpq string `server` (a new password, a host
    /// that moved): connects, and refuses unless the server there has the epoch this database
    /// last synced with. With `allowingAnotherServer`, any server: the next sync starts over
    /// with it (``checkIdentity(_:)``).
    ///
    /// - Throws: ``SyncError/notConfigured(path:)``, ``SyncError/server(_:)``,
    ///   ``SyncError/newerServerSchema(found:supported:)``, ``SyncError/state(path:reason:)`` for
    ///   another server.
    public static func changeServer(database: RecordDatabase, to server: String, allowingAnotherServer: Bool) throws(SyncError) {
        let lock = try lockState(databasePath: database.path)
        defer { close(lock) }
        guard var state = try SyncState.load(databasePath: database.path, includingRecords: false) else {
            throw .notConfigured(path: database.path)
        }
        let connection: Connection
        do { connection = try Connection(server) } catch { throw .server(error) }
        try ServerSchema.check(connection)
        let epoch = try ServerContainer(connection: connection).identity(clientID: state.clientID).epoch
        if !allowingAnotherServer, let known = state.serverEpoch, epoch != known {
            throw .state(
                path: SyncState.path(forDatabase: database.path),
                reason: "\(ConnectionString.redacted(server)) is another server than the one this database syncs with;"
                    + " to move this database to it, run 'notesfs sync set-url URL --other-server'")
        }
        try state.setServer(server, databasePath: database.path)
        try state.save(databasePath: database.path)
    }

    /// Forgets what the server held: its seq, the merge bases, the push token, the rows set aside,
    /// and the marker of the last page applied (its seqs are the old server's: recovering from it
    /// would take records for synced that this server never had).
    ///
    /// - Throws: ``SyncError/store(_:)``.
    private func startOver() throws(SyncError) {
        let marker = RecordID(recordName: AppliedPageMarker.recordName)
        if database.metadata(for: marker) != nil {
            do { try database.modify(deleting: [marker]) } catch { throw .store(error) }
        }
        // Bases are kept, unconfirmed: the pull from seq 0 keeps each where the server's record
        // matches it (``SyncEngine/confirmedAfterReset(_:server:)``) and forgets the rest.
        for name in state.records.keys {
            guard let kept = state.records[name] else { continue }
            state.records[name] = SyncedRecord(
                recordType: kept.recordType, serverSeq: SyncedRecord.unconfirmedSeq, localTag: kept.localTag, base: try kept.base)
        }
        state.unconfirmedBases = true
        state.serverSeq = 0
        state.localToken = nil
        state.setAside = [:]
        state.setAsideSummaries = [:]
        conflicted = []
        try? PushIntent.remove(databasePath: database.path)
    }

    static let newServerNotice =
        "the server is not the one this database last synced with (it was reset, replaced or restored from a backup):"
        + " everything here is uploaded again where the server lacks it, and everything on it is fetched and merged; nothing local is lost"
    static let copyNotice =
        "this database is a copy (a clone, or restored from a backup) of one that has synced since: it syncs on as a new"
        + " machine, fetching what the other copy pushed and merging the edits made here; nothing local is lost"
}
