import CPostgres

/// The rows a statement returned, copied out of the `PGresult` (every value in text format).
public struct ResultSet: Sendable {
    public var columns: [String]
    /// Each row's values in column order; nil for SQL NULL.
    public var rows: [[String?]]
    /// The rows an INSERT, UPDATE or DELETE touched (`PQcmdTuples`), 0 otherwise.
    public var affectedRows: Int

    /// The value in `row` of the column named `column`; nil for NULL, no such column or no such row.
    public func value(_ row: Int, _ column: String) -> String? {
        guard rows.indices.contains(row), let index = columns.firstIndex(of: column) else { return nil }
        return rows[row][index]
    }

    /// Copies a result out (`PQntuples`, `PQgetvalue`, `PQgetisnull`, through `pq`); does not clear it.
    init(copying result: OpaquePointer, _ pq: cpq_library) {
        let columnCount = Int(pq.PQnfields(result))
        columns = (0..<columnCount).map { String(libpq: pq.PQfname(result, Int32($0))) }
        rows = (0..<Int(pq.PQntuples(result))).map { row in
            (0..<columnCount).map { column in
                pq.PQgetisnull(result, Int32(row), Int32(column)) != 0
                    ? nil : String(libpq: pq.PQgetvalue(result, Int32(row), Int32(column)))
            }
        }
        affectedRows = Int(String(libpq: pq.PQcmdTuples(result))) ?? 0
    }
}
