import Foundation

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// The name of one push under which its transaction writes the seqs it saved into
/// `notesfs_pushes` (``ServerContainer/push(_:after:key:)``).
struct PushKey: Codable, Sendable, Equatable {
    var clientID: String
    /// Unique to the push (a UUID).
    var value: String
}

/// What a push is about to send, written durably to `<db>/sync/pushing.json` before its server
/// transaction: after a crash before the state recorded that push, the next sync asks the server
/// whether the push's key committed (``SyncEngine/recoverUnrecordedPush()``) and, if it did,
/// records each pushed version as the record's merge base at its seq — what the push would have
/// saved. (The server row alone cannot tell: another client may have replaced it since.)
struct PushIntent: Codable, Equatable {
    /// One change of the push.
    struct Change: Codable, Equatable {
        var recordName: String
        var recordType: String
        /// The payload pushed (``RecordPayload/jsonText``); nil for a delete.
        var payload: String?
        /// The local change tag of the version pushed (nil for a delete).
        var localTag: String?
    }

    var key: PushKey
    var changes: [Change]

    static func path(forDatabase databasePath: String) -> String { databasePath + "/sync/pushing.json" }

    /// Writes the intent (temp file, fsync, rename, fsync of `sync/`).
    ///
    /// - Throws: ``SyncError/state(path:reason:)``.
    func save(databasePath: String) throws(SyncError) {
        let path = Self.path(forDatabase: databasePath)
        let data: Data
        do { data = try JSONEncoder().encode(self) } catch { throw .state(path: path, reason: "cannot encode: \(error)") }
        try DurableFile.write(data, to: path)
    }

    /// The intent left by a push whose state was not saved; nil when there is none. A damaged
    /// file is taken as none: the records stay pending, and a pushed version the server still
    /// holds is recognised by its origin, as before there were intents.
    static func load(databasePath: String) -> PushIntent? {
        guard let data = FileManager.default.contents(atPath: path(forDatabase: databasePath)) else { return nil }
        return try? JSONDecoder().decode(PushIntent.self, from: data)
    }

    /// Removes the intent durably (nothing when there is none).
    ///
    /// - Throws: ``SyncError/state(path:reason:)``.
    static func remove(databasePath: String) throws(SyncError) {
        let path = path(forDatabase: databasePath)
        guard unlink(path) == 0 else {
            if errno == ENOENT { return }
            throw DurableFile.failure(path, "unlink")
        }
        try DurableFile.syncDirectory(databasePath + "/sync")
    }
}
