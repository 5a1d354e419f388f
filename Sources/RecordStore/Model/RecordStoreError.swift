import Foundation

/// Every error the record store reports, with what a caller needs to act on it.
public enum RecordStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A save with the `ifServerRecordUnchanged` policy met a newer server record.
    case serverRecordChanged(serverRecord: Record, clientRecord: Record)
    /// The record does not exist (fetch, or a save of a record deleted on the server).
    case unknownItem(RecordID)
    /// A saved record references a record that does not exist (or is deleted in the same modify).
    case invalidReference(from: RecordID, key: String, to: RecordID)
    /// The same record appears twice in one modify, or is saved and deleted at once.
    case invalidArguments(String)
    /// A record file on disk is damaged (truncated, not JSON, wrong types, missing).
    case damagedRecord(RecordID?, path: String, reason: String)
    /// The database was written by a newer notesfs.
    case unsupportedFormat(found: Int, supported: Int)
    /// The database directory is missing or not a database.
    case notADatabase(path: String, reason: String)
    /// A change token is from another database or too old; fetch everything again.
    case changeTokenExpired
    /// A modify required the store to be as it was at this token (``RecordDatabase/modify(saving:deleting:savePolicy:asExternalChange:reason:deleteConditions:unchangedSince:)``)
    /// and another commit came after it: nothing was committed; plan the change again.
    case changedSince(ChangeToken)
    /// A predicate could not be parsed; `position` is the 1-based character column.
    case predicateSyntax(message: String, position: Int)
    /// A saved record is larger than the store reads back (its JSON over `limit` bytes): refused,
    /// nothing committed.
    case recordTooLarge(RecordID, size: Int, limit: Int)
    /// A system call failed.
    case io(path: String, operation: String, errno: Int32)
    /// A write to a database opened read-only (a read-only filesystem or a directory the user may
    /// only read): reads work, every change fails with this (the mount answers `EROFS`).
    case readOnly(path: String)

    public var description: String {
        switch self {
        case .serverRecordChanged(let server, _):
            "record \(server.recordID) was changed by someone else (server change tag \(server.recordChangeTag ?? "-"))"
        case .unknownItem(let id): "no record named \(id)"
        case .invalidReference(let from, let key, let to):
            "record \(from) field \(key) references missing record \(to)"
        case .invalidArguments(let why): "invalid modify: \(why)"
        case .damagedRecord(let id, let path, let reason):
            "damaged record\(id.map { " \($0)" } ?? "") at \(path): \(reason)"
        case .unsupportedFormat(let found, let supported):
            "database format \(found) is newer than this notesfs supports (\(supported)); upgrade notesfs"
        case .notADatabase(let path, let reason): "\(path): not a notesfs database: \(reason)"
        case .changeTokenExpired: "change token expired or from another database; fetch all records again"
        case .changedSince(let token):
            "the database changed after \(token.stringValue), which this change was planned on; nothing was changed"
        case .predicateSyntax(let message, let position): "predicate syntax error at column \(position): \(message)"
        case .recordTooLarge(let id, let size, let limit):
            "record \(id) is \(size) bytes as JSON, over the \(limit) bytes a record may hold; nothing was saved"
        case .io(let path, let operation, let code):
            "\(operation) \(path): \(String(cString: strerror(code)))"
        case .readOnly(let path): "\(path): the database is read-only here (no write access); nothing was changed"
        }
    }
}
