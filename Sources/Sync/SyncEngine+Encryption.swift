import Foundation
import Notes
import Postgres
import RecordStore

/// How `sync init` treats encryption (``SyncEngine/initialize(database:server:keys:)``).
public enum SyncKeys: Sendable {
    /// A readable server (`--no-encryption`): the server can read every note.
    case readable
    /// Encrypted: makes the keys of a server that holds nothing yet, or joins an encrypted one,
    /// with the passphrase the closure returns. It is called only when a passphrase is needed,
    /// told whether it makes a new one (so that a terminal asks twice).
    case passphrase(@Sendable (_ creating: Bool) throws(SyncError) -> [UInt8])
    /// Joins an encrypted server with its recovery key (the text `sync init` printed once).
    case recoveryKey(String)
}

/// An encrypted server's data key, unlocked with the passphrase for this process only: never
/// written to disk (`sync init --ask-passphrase`, then `sync` asks each time).
public struct UnlockedKey: Sendable {
    let key: DataKey
}

/// What `sync init` did.
public struct SyncSetup: Sendable {
    public var state: SyncState
    /// The recovery key, when this `sync init` made the server's keys: to show once (it is stored nowhere).
    public var recoveryKey: String?
    /// Whether the server is encrypted.
    public var encrypted: Bool { state.keyID != nil }
}

extension SyncEngine {
    /// The shortest passphrase a new encrypted server takes.
    public static let minimumPassphraseLength = 8

    /// Connects `database` to the server at `server` (a libpq URL or conninfo): creates or migrates
    /// the server's schema, makes or joins its encryption as `keys` says, and writes the local
    /// sync state. Run again with the same server, it only migrates the schema (or joins the
    /// server's encryption, when the server was encrypted since).
    ///
    /// Nothing local is written unless it succeeds: a wrong passphrase leaves the database as it was.
    ///
    /// - Throws: ``SyncError/server(_:)``, ``SyncError/newerServerSchema(found:supported:)``,
    ///   ``SyncError/state(path:reason:)`` when the database already syncs with another server,
    ///   ``SyncError/encryption(_:)`` (a wrong passphrase or recovery key), ``SyncError/keys(_:)``
    ///   when `keys` does not fit the server.
    ///
    /// `keepingKey` false (`--ask-passphrase`): the key is not kept on this machine; each sync
    /// unlocks it with the passphrase (``unlock(database:passphrase:)``), and a mount cannot sync.
    @discardableResult
    public static func initialize(database: RecordDatabase, server: String, keys: SyncKeys = .readable, keepingKey: Bool = true)
        throws(SyncError) -> SyncSetup
    {
        let connection: Connection
        do { connection = try Connection(server) } catch { throw .server(error) }
        try ServerSchema.install(on: connection)
        let existing = try SyncState.load(databasePath: database.path)
        if let existing, !existing.isServer(server) {
            throw .state(
                path: SyncState.path(forDatabase: database.path),
                reason: "already syncs with another server (\(ConnectionString.redacted(existing.server)))")
        }
        var state = existing ?? SyncState(server: server, clientID: UUID.random().uuidString.lowercased(), host: ConflictName.hostName())
        let identity = try ServerContainer(connection: connection).identity(clientID: state.clientID)
        let epoch = identity.epoch ?? ""
        let wrapped = try ServerKeys.read(connection)
        var recovery: String?
        let key: DataKey?
        if let existing, let keyID = existing.keyID, keepingKey, let local = try LocalKeyFile.load(databasePath: database.path),
            local.keyID == keyID, identity.keyIDs == [keyID]
        {
            return SyncSetup(state: existing, recoveryKey: nil)  // joined already
        } else if !wrapped.isEmpty {
            key = try join(wrapped, epoch: epoch, keys: keys, server: server)
        } else if case .passphrase(let ask) = keys {
            // A server reset or replaced under a database that synced encrypted gets this database's key again.
            let kept = existing?.keyID == nil ? nil : try cipher(for: state, databasePath: database.path)?.key
            let made = try makeKeys(epoch: epoch, passphrase: ask(true), reusing: kept, on: connection, server: server)
            key = made.key
            recovery = made.recoveryKey.text
        } else if case .recoveryKey = keys {
            throw .keys("\(ConnectionString.redacted(server)) is not encrypted: there is nothing to open with a recovery key")
        } else {
            key = nil  // --no-encryption: the explicit choice of a readable server, also for a database that synced encrypted
        }
        if let key {
            // Before the state that names it; or, asked for each sync, removed.
            if keepingKey {
                try LocalKeyFile.save(key, databasePath: database.path)
            } else if FileManager.default.fileExists(atPath: LocalKeyFile.path(databasePath: database.path)) {
                try LocalKeyFile.remove(databasePath: database.path)
            }
        }
        if existing == nil {
            try state.setServer(server, databasePath: database.path)
            state.serverEpoch = identity.epoch
        }
        state.keyID = key?.keyID
        try state.save(databasePath: database.path)
        if key == nil, existing?.keyID != nil { try LocalKeyFile.remove(databasePath: database.path) }
        return SyncSetup(state: state, recoveryKey: recovery)
    }

    /// The data key of the encrypted server whose wrapped keys are `wrapped`, opened as `keys` says.
    private static func join(_ wrapped: [WrappedKey.Kind: WrappedKey], epoch: String, keys: SyncKeys, server: String) throws(SyncError)
        -> DataKey
    {
        do {
            switch keys {
            case .readable:
                throw SyncError.keys(
                    "\(ConnectionString.redacted(server)) is encrypted: join it with its passphrase (on a terminal, or"
                        + " --passphrase-file FILE) or its recovery key (--recovery-key-file FILE); nothing was changed")
            case .passphrase(let ask):
                guard let key = wrapped[.passphrase] else { throw SyncError.keys("the server holds no passphrase-wrapped key") }
                return try key.unwrap(passphrase: ask(false), serverEpoch: epoch)
            case .recoveryKey(let text):
                guard let key = wrapped[.recovery] else { throw SyncError.keys("the server holds no recovery-wrapped key") }
                return try key.unwrap(recoveryKey: RecoveryKey(text: text), serverEpoch: epoch)
            }
        } catch let error as EncryptionError {
            throw SyncError(error)
        } catch let error as SyncError {
            throw error
        } catch {
            throw .keys("\(error)")
        }
    }

    /// Makes a new recovery key and a data key (or takes `reusing`, the key of a database whose
    /// server was reset), and stores the data key wrapped by both on a server that holds nothing yet.
    private static func makeKeys(epoch: String, passphrase: [UInt8], reusing: DataKey?, on connection: Connection, server: String)
        throws(SyncError) -> (key: DataKey, recoveryKey: RecoveryKey)
    {
        guard passphrase.count >= minimumPassphraseLength else {
            throw .keys("a passphrase needs at least \(minimumPassphraseLength) characters; nothing was changed")
        }
        let key: DataKey
        let recovery: RecoveryKey
        let wrapped: [WrappedKey]
        do {
            if let reusing { key = reusing } else { key = try DataKey.random() }
            recovery = try RecoveryKey.random()
            wrapped = [
                try WrappedKey.wrap(key, passphrase: passphrase, serverEpoch: epoch),
                try WrappedKey.wrap(key, recoveryKey: recovery, serverEpoch: epoch),
            ]
        } catch { throw SyncError(error) }
        guard try ServerKeys.create(wrapped, on: connection) else {
            if try !ServerKeys.read(connection).isEmpty {
                throw .keys(
                    "another machine encrypted \(ConnectionString.redacted(server)) meanwhile: run 'notesfs sync init URL' again to join it"
                )
            }
            throw .keys(
                "\(ConnectionString.redacted(server)) holds readable notes already: join it with --no-encryption"
                    + " (this notesfs cannot encrypt a server in use yet); nothing was changed")
        }
        return (key, recovery)
    }

    static let noKeyAdvice =
        "it was reset or replaced. Nothing was pushed; to upload this database to it encrypted with its key, run"
        + " 'notesfs sync init URL' with a passphrase (or --no-encryption to make it readable)"

    /// Whether the database syncs encrypted without its key on this machine (`--ask-passphrase`,
    /// or not joined yet): a sync needs ``unlock(database:passphrase:)`` first.
    public static func needsPassphrase(databasePath: String) -> Bool {
        guard let state = try? SyncState.load(databasePath: databasePath, includingRecords: false), state.keyID != nil else { return false }
        return (try? LocalKeyFile.load(databasePath: databasePath)) == nil
    }

    /// The server's data key, unwrapped with `passphrase` for this process (nothing is written).
    ///
    /// - Throws: ``SyncError/encryption(_:)`` for a wrong passphrase, ``SyncError/keys(_:)`` when
    ///   the server's key is not the one this database synced with, ``SyncError/server(_:)``.
    public static func unlock(database: RecordDatabase, passphrase: [UInt8]) throws(SyncError) -> UnlockedKey {
        guard let state = try SyncState.load(databasePath: database.path, includingRecords: false) else {
            throw .notConfigured(path: database.path)
        }
        guard let keyID = state.keyID else { throw .keys("this database syncs with a readable server: there is no key to unlock") }
        let connection: Connection
        do { connection = try Connection(state.connectionString(databasePath: database.path)) } catch { throw .server(error) }
        try ServerSchema.check(connection)
        let epoch = try ServerContainer(connection: connection).identity(clientID: state.clientID).epoch ?? ""
        guard let wrapped = try ServerKeys.read(connection)[.passphrase] else {
            throw .keys("the server holds no key, but this database syncs with it encrypted: " + noKeyAdvice)
        }
        let key: DataKey
        do { key = try wrapped.unwrap(passphrase: passphrase, serverEpoch: epoch) } catch { throw SyncError(error) }
        guard key.keyID == keyID else {
            throw .keys(
                "the server's key is not the one this database holds (rotated on another machine): run 'notesfs sync init URL' again")
        }
        return UnlockedKey(key: key)
    }

    /// The cipher of a database that syncs encrypted (its key from ``LocalKeyFile``); nil for a readable server.
    ///
    /// - Throws: ``SyncError/keys(_:)`` when the key is not on this machine or is another one.
    static func cipher(for state: SyncState, databasePath: String) throws(SyncError) -> RowCipher? {
        guard let keyID = state.keyID else { return nil }
        guard let key = try LocalKeyFile.load(databasePath: databasePath) else {
            throw .keys(
                "this database syncs with an encrypted server but its key is not here (\(LocalKeyFile.path(databasePath: databasePath))):"
                    + " run 'notesfs sync init URL' again with the passphrase; local work goes on, nothing is pushed meanwhile")
        }
        guard key.keyID == keyID else {
            throw .keys(
                "the key in \(LocalKeyFile.path(databasePath: databasePath)) is not this server's: run 'notesfs sync init URL' again")
        }
        return RowCipher(key: key)
    }

    /// Refuses to sync when the server's keys and this database's disagree (before anything is
    /// fetched or pushed): a readable database never pushes readable notes to an encrypted server.
    ///
    /// - Throws: ``SyncError/keys(_:)``.
    func checkKeys(server keyIDs: Set<String>) throws(SyncError) {
        // The state may have joined (or left) an encrypted server since this engine was made.
        if container.cipher?.key.keyID != state.keyID { container.cipher = try Self.cipher(for: state, databasePath: database.path) }
        switch state.keyID {
        case nil where !keyIDs.isEmpty:
            throw .keys(
                "the server is encrypted now: this database pushes nothing to it until it joins: run 'notesfs sync init URL'"
                    + " with the passphrase")
        case nil: return
        case .some where keyIDs.isEmpty:
            throw .keys("the server holds no key, but this database syncs with it encrypted: " + Self.noKeyAdvice)
        case let keyID?:
            guard keyIDs == [keyID] else {
                throw .keys(
                    "the server's key is not the one this database holds (replaced, or rotated on another machine):"
                        + " run 'notesfs sync init URL' again with the passphrase; nothing was pushed")
            }
        }
    }

    /// `sync encrypt`: turns the readable server this database syncs with into an encrypted one.
    /// Syncs first (this database's changes go up readable and are sealed with the rest), then
    /// makes a data key and a recovery key, and seals every row and asset on the server in one
    /// transaction (``ServerContainer/reseal(from:to:keys:)``: all or nothing, run again after a
    /// crash). Other machines stop at their next sync, pushing nothing, until they join with the
    /// passphrase; their edits made meanwhile are then merged and pushed sealed.
    ///
    /// - Throws: ``SyncError/keys(_:)`` (encrypted already, a short passphrase), and what a sync throws.
    @discardableResult
    public static func encryptServer(database: RecordDatabase, passphrase: [UInt8]) throws(SyncError) -> SyncSetup {
        guard let before = try SyncState.load(databasePath: database.path, includingRecords: false) else {
            throw .notConfigured(path: database.path)
        }
        guard before.keyID == nil else { throw .keys("the server is encrypted already (key \(before.keyID?.prefix(8) ?? ""))") }
        return try reseal(database: database, state: before, from: nil, passphrase: passphrase)
    }

    /// `sync rotate-key`: a new data key for the encrypted server this database syncs with, every
    /// row and asset sealed again under it in one transaction (all or nothing, run again after a
    /// crash), wrapped by `passphrase` (the same or a new one) and a new recovery key. The old key
    /// opens nothing on the server from then on. Other machines stop at their next sync until they
    /// join again with the passphrase; their edits made meanwhile are kept. Of two machines
    /// rotating at once, the second finds the key changed and changes nothing.
    ///
    /// - Throws: ``SyncError/keys(_:)`` (a readable server, a key changed meanwhile, a short
    ///   passphrase), and what a sync throws.
    @discardableResult
    public static func rotateKey(database: RecordDatabase, passphrase: [UInt8]) throws(SyncError) -> SyncSetup {
        guard let before = try SyncState.load(databasePath: database.path, includingRecords: false) else {
            throw .notConfigured(path: database.path)
        }
        guard let old = try cipher(for: before, databasePath: database.path) else {
            throw .keys("this database syncs with a readable server: encrypt it with 'notesfs sync encrypt'")
        }
        return try reseal(database: database, state: before, from: old, passphrase: passphrase)
    }

    /// `sync encrypt` (`old` nil) or `sync rotate-key`: syncs, makes a new key wrapped by
    /// `passphrase` and a new recovery key, reseals the server under it, and adopts it here.
    private static func reseal(database: RecordDatabase, state: SyncState, from old: RowCipher?, passphrase: [UInt8]) throws(SyncError)
        -> SyncSetup
    {
        guard passphrase.count >= minimumPassphraseLength else {
            throw .keys("a passphrase needs at least \(minimumPassphraseLength) characters; nothing was changed")
        }
        try sync(database: database)
        let connection: Connection
        do { connection = try Connection(state.connectionString(databasePath: database.path)) } catch { throw .server(error) }
        try ServerSchema.check(connection)
        let epoch = try ServerContainer(connection: connection).identity(clientID: state.clientID).epoch ?? ""
        let (key, recovery, wrapped) = try newKeys(passphrase: passphrase, epoch: epoch)
        let done = try ServerContainer(connection: connection).reseal(from: old, to: RowCipher(key: key), keys: wrapped)
        return try adopt(key, after: done, database: database, recoveryKey: recovery)
    }

    /// A new data key and recovery key, and the key wrapped by the passphrase and by the recovery key.
    private static func newKeys(passphrase: [UInt8], epoch: String) throws(SyncError) -> (DataKey, RecoveryKey, [WrappedKey]) {
        do {
            let key = try DataKey.random()
            let recovery = try RecoveryKey.random()
            return (
                key, recovery,
                [
                    try WrappedKey.wrap(key, passphrase: passphrase, serverEpoch: epoch),
                    try WrappedKey.wrap(key, recoveryKey: recovery, serverEpoch: epoch),
                ]
            )
        } catch { throw SyncError(error) }
    }

    /// After the server was sealed under `key` (``ServerContainer/reseal(from:to:keys:)``): the key
    /// kept here first, then the state that names it, with the bases this machine holds of the
    /// resealed versions moved to their new seqs (the same content), so that the next sync takes
    /// them for its own. A crash before this leaves the old key here: the next sync says to join
    /// again with the passphrase, which gets the new one.
    private static func adopt(_ key: DataKey, after done: ServerContainer.Resealing, database: RecordDatabase, recoveryKey: RecoveryKey)
        throws(SyncError) -> SyncSetup
    {
        try LocalKeyFile.save(key, databasePath: database.path)
        let lock = try lockState(databasePath: database.path)
        defer { close(lock) }
        guard var state = try SyncState.load(databasePath: database.path) else { throw .notConfigured(path: database.path) }
        for (name, seqs) in done.seqs {
            guard let synced = state.records[name], synced.serverSeq == seqs.old else { continue }
            state.records[name] = SyncedRecord(
                recordType: synced.recordType, serverSeq: seqs.new, localTag: synced.localTag, base: try synced.base)
        }
        if state.serverSeq >= done.lastOldSeq { state.serverSeq = max(state.serverSeq, done.lastSeq) }
        state.keyID = key.keyID
        try state.save(databasePath: database.path)
        return SyncSetup(state: state, recoveryKey: recoveryKey.text)
    }

    /// Wraps this database's data key with a new passphrase on the server (the key stays: nothing
    /// is uploaded again; other machines keep their key, and join with the new passphrase).
    ///
    /// - Throws: ``SyncError/notConfigured(path:)``, ``SyncError/keys(_:)`` for a readable server
    ///   or a missing key, ``SyncError/server(_:)``.
    public static func changePassphrase(database: RecordDatabase, to passphrase: [UInt8]) throws(SyncError) {
        guard let state = try SyncState.load(databasePath: database.path, includingRecords: false) else {
            throw .notConfigured(path: database.path)
        }
        guard let cipher = try cipher(for: state, databasePath: database.path) else {
            throw .keys("this database syncs with a readable server: there is no passphrase to change")
        }
        guard passphrase.count >= minimumPassphraseLength else {
            throw .keys("a passphrase needs at least \(minimumPassphraseLength) characters; nothing was changed")
        }
        let connection: Connection
        do { connection = try Connection(state.connectionString(databasePath: database.path)) } catch { throw .server(error) }
        try ServerSchema.check(connection)
        let identity = try ServerContainer(connection: connection).identity(clientID: state.clientID)
        guard identity.keyIDs == [cipher.key.keyID] else {
            throw .keys("the server's key is not the one this database holds: nothing was changed")
        }
        let wrapped: WrappedKey
        do { wrapped = try WrappedKey.wrap(cipher.key, passphrase: passphrase, serverEpoch: identity.epoch ?? "") } catch {
            throw SyncError(error)
        }
        try ServerKeys.replace(wrapped, on: connection)
    }
}
