import CPostgres
import Foundation

extension Connection {
    /// Runs one statement with text parameters `$1`, `$2`, … (`PQexecParams`): values are never
    /// spliced into the SQL, so any string is safe. nil is SQL NULL.
    ///
    /// - Throws: ``PostgresError`` of kind `server` with the server's message and SQLSTATE, or
    ///   `connectionLost` when the connection broke.
    @discardableResult
    public func execute(_ sql: String, _ parameters: [String?] = []) throws(PostgresError) -> ResultSet {
        let result = try run(sql, parameters)
        defer { pq.PQclear(result) }
        return ResultSet(copying: result, pq)
    }

    /// Runs one statement (`PQexecParams`) with text parameters, then `bytes` as one more
    /// parameter in binary format when given; results in binary format when `binaryResults`.
    /// Returns a successful result, which the caller must `PQclear` (`pq.PQclear`).
    func run(_ sql: String, _ parameters: [String?], bytes: [UInt8]? = nil, binaryResults: Bool = false) throws(PostgresError)
        -> OpaquePointer
    {
        let copies = parameters.map { $0.map { strdup($0) } ?? nil }
        defer { for copy in copies { free(copy) } }
        var lengths = [Int32](repeating: 0, count: parameters.count)
        var formats = [Int32](repeating: 0, count: parameters.count)
        if let bytes {
            lengths.append(Int32(clamping: bytes.count))
            formats.append(1)
        }
        let resultFormat: Int32 = binaryResults ? 1 : 0
        // A binary parameter of no bytes still needs a pointer (NULL is SQL NULL): one unused byte.
        let storage = bytes.map { $0.isEmpty ? [0] : $0 } ?? []
        let result = storage.withUnsafeBytes { raw in
            var values = copies.map { UnsafePointer<CChar>($0) }
            if bytes != nil { values.append(raw.baseAddress?.assumingMemoryBound(to: CChar.self)) }
            return values.withUnsafeBufferPointer { buffer in
                pq.PQexecParams(handle, sql, Int32(values.count), nil, buffer.baseAddress, lengths, formats, resultFormat)
            }
        }
        guard let result else { throw connectionError() }
        let status = pq.PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            defer { pq.PQclear(result) }
            throw error(from: result)
        }
        return result
    }

    /// The error a failed result reports: the server's fields when it sent them, else libpq's message.
    func error(from result: OpaquePointer) -> PostgresError {
        func scrubbed(_ text: String) -> String { ConnectionString.scrubbed(text, conninfo: conninfo) }
        func field(_ code: Int) -> String? { pq.PQresultErrorField(result, Int32(code)).map { scrubbed(String(cString: $0)) } }
        if let sqlState = field(CPQ_DIAG_SQLSTATE) {
            let message = field(CPQ_DIAG_MESSAGE_PRIMARY) ?? scrubbed(String(libpq: pq.PQresultErrorMessage(result)).trimmedMessage)
            return PostgresError(.server, message, sqlState: sqlState, detail: field(CPQ_DIAG_MESSAGE_DETAIL))
        }
        let message = scrubbed(String(libpq: pq.PQresultErrorMessage(result)).trimmedMessage)
        if !isOpen { return PostgresError(.connectionLost, message.isEmpty ? "connection lost" : message) }
        return PostgresError(.client, message.isEmpty ? "statement failed" : message)
    }

    /// Runs `body` in a transaction: `BEGIN`, then `COMMIT` when it returns, `ROLLBACK` when it throws.
    ///
    /// A `COMMIT` that fails (a serialization failure, a lost connection) throws: then nothing of
    /// the transaction may be assumed to have happened, except that a lost connection leaves it
    /// unknown; callers that must know make their writes idempotent.
    ///
    /// - Throws: what `body` throws, or the ``PostgresError`` of `BEGIN`/`COMMIT`.
    @discardableResult
    public func transaction<T>(_ body: () throws(PostgresError) -> T) throws(PostgresError) -> T {
        try execute("BEGIN")
        let value: T
        do {
            value = try body()
        } catch {
            _ = try? execute("ROLLBACK")
            throw error
        }
        try execute("COMMIT")
        return value
    }

    /// A quoted identifier for SQL text (`PQescapeIdentifier`), for names that cannot be parameters
    /// (`LISTEN channel`).
    ///
    /// - Throws: ``PostgresError`` of kind `client` when libpq refuses the string.
    public func quotedIdentifier(_ name: String) throws(PostgresError) -> String {
        guard let quoted = pq.PQescapeIdentifier(handle, name, strlen(name)) else { throw connectionError() }
        defer { pq.PQfreemem(quoted) }
        return String(cString: quoted)
    }
}
