import CPostgres

/// Binary `bytea` transfer: bytes go to and come from the server as they are, with no hex text
/// form (which doubles them, and which ``Bytea`` builds whole in memory).
extension Connection {
    /// Runs one statement whose last parameter is `bytes`, sent in binary format; `parameters`
    /// are text parameters `$1`…`$n` as in ``execute(_:_:)`` and `bytes` is `$n+1`.
    ///
    /// - Throws: ``PostgresError`` as ``execute(_:_:)`` does.
    @discardableResult
    public func execute(_ sql: String, _ parameters: [String?], bytes: [UInt8]) throws(PostgresError) -> ResultSet {
        let result = try run(sql, parameters, bytes: bytes)
        defer { pq.PQclear(result) }
        return ResultSet(copying: result, pq)
    }

    /// Runs one query with text parameters (and `sending` as one more, binary, when given) and
    /// returns the first column of each row as bytes (results in binary format, so that column
    /// must be `bytea`); nil for SQL NULL.
    ///
    /// The server sends whole rows: bound the size in the query itself (`WHERE
    /// octet_length(data) <= $n`) when it comes from somewhere that is not trusted.
    ///
    /// - Throws: ``PostgresError`` as ``execute(_:_:)`` does.
    public func fetchBytes(_ sql: String, _ parameters: [String?], sending bytes: [UInt8]? = nil) throws(PostgresError) -> [[UInt8]?] {
        let result = try run(sql, parameters, bytes: bytes, binaryResults: true)
        defer { pq.PQclear(result) }
        guard pq.PQnfields(result) >= 1 else { return [] }
        return (0..<pq.PQntuples(result)).map { row -> [UInt8]? in
            guard pq.PQgetisnull(result, row, 0) == 0, let value = pq.PQgetvalue(result, row, 0) else { return nil }
            let length = Int(pq.PQgetlength(result, row, 0))
            return value.withMemoryRebound(to: UInt8.self, capacity: length) { [UInt8](UnsafeBufferPointer(start: $0, count: length)) }
        }
    }
}
