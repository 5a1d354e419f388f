import CPostgres
import Foundation

/// One connection to a PostgreSQL server, opened from a libpq conninfo string or URL.
///
/// Everything libpq understands works here unchanged: `postgresql://user@host/db?sslmode=require`,
/// `host=/run/postgresql dbname=notes`, `service=notes`, `PGPASSFILE`, `PGHOST` and the rest.
///
/// Not thread-safe, as a libpq connection is not: use one connection from one thread at a time
/// (the type is not `Sendable`, so the compiler holds you to it).
public final class Connection {
    /// The `PGconn *`; valid until ``close()`` or deinit.
    let handle: OpaquePointer
    /// libpq's functions (``LibPQ``), loaded before the connection was opened.
    let pq: cpq_library
    /// The conninfo it was opened with: every message libpq hands back is scrubbed of it
    /// (``ConnectionString/scrubbed(_:conninfo:)``).
    let conninfo: String

    /// Connects (`PQconnectdb`), blocking until the connection is up or has failed. The first
    /// connection of the process loads libpq (``LibPQ``).
    ///
    /// - Throws: ``PostgresError`` of kind `authenticationFailed` for a wrong or missing password,
    ///   `connectionFailed` for anything else (unreachable host, no such database, bad conninfo),
    ///   with libpq's message; of kind `client` when libpq cannot be loaded.
    public init(_ conninfo: String) throws(PostgresError) {
        let pq = try LibPQ.functions()
        guard let handle = pq.PQconnectdb(conninfo) else {
            throw PostgresError(.client, "libpq could not allocate a connection")
        }
        guard pq.PQstatus(handle) == CONNECTION_OK else {
            let message = ConnectionString.scrubbed(String(libpq: pq.PQerrorMessage(handle)).trimmedMessage, conninfo: conninfo)
            let needsPassword = pq.PQconnectionNeedsPassword(handle) != 0
            pq.PQfinish(handle)
            let isAuthentication = needsPassword || message.contains("authentication failed")
            throw PostgresError(isAuthentication ? .authenticationFailed : .connectionFailed, message)
        }
        self.handle = handle
        self.pq = pq
        self.conninfo = conninfo
        // Server messages (NOTICE) go nowhere instead of stderr.
        _ = pq.PQsetNoticeProcessor(handle, { _, _ in }, nil)
    }

    deinit { pq.PQfinish(handle) }

    /// Whether the connection still works as far as libpq knows (`PQstatus`).
    public var isOpen: Bool { pq.PQstatus(handle) == CONNECTION_OK }

    /// The server's version as an integer (`PQserverVersion`): 150014 for 15.14.
    public var serverVersion: Int { Int(pq.PQserverVersion(handle)) }

    /// The server process serving this connection (`PQbackendPID`): a ``Notification`` whose
    /// `senderPID` it is came from this connection.
    public var backendPID: Int32 { pq.PQbackendPID(handle) }

    /// The error for a failure with no result to read it from.
    func connectionError() -> PostgresError {
        let message = ConnectionString.scrubbed(String(libpq: pq.PQerrorMessage(handle)).trimmedMessage, conninfo: conninfo)
        return PostgresError(isOpen ? .client : .connectionLost, message.isEmpty ? "connection failed" : message)
    }
}
