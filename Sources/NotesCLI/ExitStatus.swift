import Foundation
import Notes
import POSIX
import RecordStore

/// The process exit status of every `notesfs` subcommand, one per kind of failure.
///
/// Listed in `notesfs --help` and in the EXIT STATUS section of `notesfs(1)`.
public enum ExitStatus: Int32, Sendable, CaseIterable {
    /// Success (and, for `fsck`, a clean database).
    case success = 0
    /// No such folder, note, attachment, record or file.
    case notFound = 1
    /// Bad command line: unknown command or option, missing argument, bad predicate or token syntax.
    case usage = 2
    /// A conflict: the record changed elsewhere since it was read, the name already exists, or the
    /// change token expired.
    case conflict = 3
    /// The database is damaged (`fsck` found problems, a record file is unreadable).
    case damaged = 4
    /// An I/O error: a system call failed, or the editor failed.
    case io = 5
    /// The database directory is missing, is not a notesfs database, or has a newer format.
    case notADatabase = 6

    /// One line for `--help` and the man page.
    var summary: String {
        switch self {
        case .success: "success (fsck: no problems found)"
        case .notFound: "no such folder, note, attachment, record or file"
        case .usage: "usage error: bad command, option, argument, predicate or token"
        case .conflict: "conflict: changed elsewhere since read, name exists, or token expired"
        case .damaged: "damaged database (fsck found problems, unreadable record)"
        case .io: "I/O error (system call failed, editor failed)"
        case .notADatabase: "database missing, not a notesfs database, or newer format"
        }
    }
}

/// A failure of a command: what it is about, why, and the exit status it maps to.
///
/// Printed as one line on stderr: `notesfs: <subject>: <message>`, optionally followed by
/// `details` lines (the caret under a predicate syntax error).
struct CLIError: Error, Sendable {
    var status: ExitStatus
    /// A path, record name or command the error is about; nil when there is none.
    var subject: String?
    var message: String
    var details: [String] = []

    init(_ status: ExitStatus, _ subject: String?, _ message: String, details: [String] = []) {
        self.status = status
        self.subject = subject
        self.message = message
        self.details = details
    }

    /// `<subject>: <message>`, the error line without the `notesfs: ` prefix.
    var line: String { (subject.map { $0 + ": " } ?? "") + message }

    static func usage(_ message: String, command: String? = nil) -> CLIError {
        CLIError(.usage, command, message + " (see 'notesfs \(command.map { $0 + " " } ?? "")--help')")
    }

    /// Maps a store error about `subject` to its exit status and a one-line cause.
    static func store(_ error: RecordStoreError, subject: String?) -> CLIError {
        switch error {
        case .serverRecordChanged:
            CLIError(.conflict, subject, "changed by someone else since it was read")
        case .unknownItem(let id):
            CLIError(.notFound, subject ?? id.recordName, "no such record")
        case .invalidReference(_, let key, let to):
            CLIError(.notFound, subject, "field \(key) refers to a missing record \(to)")
        case .invalidArguments(let why):
            CLIError(.usage, subject, why)
        case .damagedRecord(_, let path, let reason):
            CLIError(.damaged, subject ?? path, "damaged record (\(path)): \(reason); run 'notesfs fsck'")
        case .unsupportedFormat:
            CLIError(.notADatabase, subject, error.description)
        case .notADatabase(let path, let reason):
            CLIError(.notADatabase, path, "not a notesfs database: \(reason)")
        case .changeTokenExpired:
            CLIError(.conflict, subject, "change token expired or from another database; fetch everything again (omit --since)")
        case .changedSince:
            CLIError(.conflict, subject, error.description)
        case .predicateSyntax(let message, let position):
            CLIError(.usage, subject, "syntax error at column \(position): \(message)")
        case .io(let path, let operation, let code):
            CLIError(.io, path, "\(operation): \(String(cString: strerror(code)))")
        case .readOnly(let path):
            CLIError(.io, path, "read-only database: \(String(cString: strerror(EROFS)))")
        case .recordTooLarge(_, let size, let limit):
            CLIError(
                .io, subject,
                "\(size) bytes as JSON, over the \(limit) a record may hold: \(String(cString: strerror(EFBIG))); nothing was saved")
        }
    }

    static func notes(_ error: NotesError, subject: String?) -> CLIError {
        switch error {
        case .store(let failure): Self.store(failure, subject: subject)
        case .wrongRecordType, .invalidField, .damagedVersion: CLIError(.damaged, subject, error.description)
        case .search: CLIError(.io, subject, error.description)
        case .refusedQuery: CLIError(.usage, subject, error.description)
        case .notFound(let what): CLIError(.notFound, subject, what)
        }
    }

    /// An errno from a system call on `path`.
    static func system(_ operation: String, _ path: String, errno code: Int32) -> CLIError {
        CLIError(code == ENOENT ? .notFound : .io, path, "\(operation): \(String(cString: strerror(code)))")
    }

    /// A failed call of the POSIX layer.
    static func system(_ failure: SystemCallError) -> CLIError { system(failure.call, failure.path, errno: failure.errno) }
}
