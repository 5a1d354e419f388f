import CSQLite
import Foundation
import SQLite

/// `notesrank(words, maxRowid, countedRows, weight…)`: FTS5's `bm25(weight…)` (the same
/// formula, k1 = 1.2, b = 0.75, each column's weight), whose phrase counts stop at `countedRows`.
///
/// BM25 weighs each phrase by its IDF, which needs how many rows hold it. FTS5's `bm25` counts
/// them by walking the phrase's whole list before it scores the first row: `zanzibar alpha`
/// (101 matches) walked all 100,000 rows holding `alpha`, 6 ms of a 13 ms search. This function
/// counts a phrase's rows up to `countedRows`, in rowid order; a phrase with more is estimated
/// from where its `countedRows`th row lies among the table's rowids (`maxRowid`, the highest):
/// `countedRows × maxRowid / rowid`. Below the bound the score is `bm25`'s exactly; past it only
/// a common phrase's IDF is estimated, and such a phrase's IDF is small (1e-6 for one in over
/// half of the rows), so it moves a score little.
///
/// Registered on each connection of a ``TextIndex`` (``register(on:)``); the table's stored
/// `rank` stays `bm25`, so the index file reads the same in any SQLite.
enum EstimatedBM25 {
    static let name = "notesrank"
    /// The rows of one phrase counted before its count is estimated.
    static let countedRows = 2_000

    /// Registers the function with FTS5 on `connection`.
    ///
    /// - Throws: ``SQLiteError`` when FTS5 cannot be reached.
    static func register(on connection: SQLiteConnection) throws(SQLiteError) {
        guard let db = connection.handle else { throw SQLiteError(code: SQLITE_MISUSE, message: "\(connection.path): closed") }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &statement, nil) == SQLITE_OK, let statement else {
            throw connection.error(sqlite3_errcode(db))
        }
        defer { sqlite3_finalize(statement) }
        var api: UnsafeMutablePointer<fts5_api>?
        // SQLite compares the pointer's type by its address's string until the statement ends:
        // a static string's bytes live as long as the program.
        let type: StaticString = "fts5_api_ptr"
        let stepped = withUnsafeMutablePointer(to: &api) { pointer -> Int32 in
            let name = UnsafeRawPointer(type.utf8Start).assumingMemoryBound(to: CChar.self)
            guard sqlite3_bind_pointer(statement, 1, pointer, name, nil) == SQLITE_OK else { return SQLITE_ERROR }
            return sqlite3_step(statement)
        }
        guard stepped == SQLITE_ROW, let api, api.pointee.iVersion >= 2, let create = api.pointee.xCreateFunction else {
            throw SQLiteError(code: SQLITE_ERROR, message: "\(connection.path): FTS5 is not available")
        }
        let rc = create(api, name, nil, rankFunction, nil)
        guard rc == SQLITE_OK else { throw connection.error(rc) }
    }

    /// What one statement computes once: each phrase's IDF and the average row size.
    final class Statistics {
        var idf: [Double] = []
        var averageSize = 0.0
        var frequencies: [Double] = []
    }

    /// One phrase's rows counted by `xQueryPhrase`, up to `limit`.
    struct PhraseCount {
        var rows: Int64 = 0
        var limit: Int64
        /// The rowid of the `limit`th row (0: fewer rows).
        var lastRowid: Int64 = 0
    }

    /// The phrase's rows in `[limit, rowCount]` when the `limit`th lies at `lastRowid` of
    /// `maxRowid`, as if the phrase were spread evenly over the rowids.
    static func estimatedRows(_ count: PhraseCount, maxRowid: Int64, rowCount: Int64) -> Double {
        guard count.lastRowid > 0 else { return Double(count.rows) }
        let estimate = Double(count.limit) * Double(max(maxRowid, count.lastRowid)) / Double(count.lastRowid)
        return min(max(estimate, Double(count.limit)), Double(max(rowCount, count.limit)))
    }

    /// BM25's IDF of a phrase in `hits` of `rows` rows (FTS5's floor: 1e-6).
    static func idf(hits: Double, rows: Int64) -> Double {
        let idf = log((Double(rows) - hits + 0.5) / (hits + 0.5))
        return idf > 0 ? idf : 1e-6
    }
}

/// Counts a phrase's rows; stops at the limit (`SQLITE_DONE` ends `xQueryPhrase` without error).
private let countRow: @convention(c) (UnsafePointer<Fts5ExtensionApi>?, OpaquePointer?, UnsafeMutableRawPointer?) -> Int32 = {
    api, context, user in
    guard let user else { return SQLITE_ERROR }
    let count = user.assumingMemoryBound(to: EstimatedBM25.PhraseCount.self)
    count.pointee.rows += 1
    guard count.pointee.rows >= count.pointee.limit else { return SQLITE_OK }
    count.pointee.lastRowid = api?.pointee.xRowid?(context) ?? 0
    return SQLITE_DONE
}

/// Releases a statement's ``EstimatedBM25/Statistics`` (FTS5 calls it when the statement ends).
private let releaseStatistics: @convention(c) (UnsafeMutableRawPointer?) -> Void = { pointer in
    guard let pointer else { return }
    Unmanaged<EstimatedBM25.Statistics>.fromOpaque(pointer).release()
}

/// The statement's statistics, computed at its first row.
private func statistics(
    _ fts: Fts5ExtensionApi, _ context: OpaquePointer, _ values: UnsafeMutablePointer<OpaquePointer?>, _ count: Int32
) -> (EstimatedBM25.Statistics?, Int32) {
    if let kept = fts.xGetAuxdata?(context, 0) {
        return (Unmanaged<EstimatedBM25.Statistics>.fromOpaque(kept).takeUnretainedValue(), SQLITE_OK)
    }
    guard let rowCount = fts.xRowCount, let totalSize = fts.xColumnTotalSize, let phraseCount = fts.xPhraseCount,
        let queryPhrase = fts.xQueryPhrase, let setAuxdata = fts.xSetAuxdata
    else { return (nil, SQLITE_ERROR) }
    var rows: Int64 = 0
    var tokens: Int64 = 0
    var rc = rowCount(context, &rows)
    if rc == SQLITE_OK { rc = totalSize(context, -1, &tokens) }
    guard rc == SQLITE_OK else { return (nil, rc) }
    let maxRowid = count > 0 ? sqlite3_value_int64(values[0]) : 0
    let limit = count > 1 ? max(1, sqlite3_value_int64(values[1])) : Int64(EstimatedBM25.countedRows)
    let statistics = EstimatedBM25.Statistics()
    statistics.averageSize = rows > 0 ? Double(tokens) / Double(rows) : 0
    let phrases = Int(phraseCount(context))
    statistics.frequencies = Array(repeating: 0, count: phrases)
    for phrase in 0..<phrases {
        var counted = EstimatedBM25.PhraseCount(limit: limit)
        rc = queryPhrase(context, Int32(phrase), &counted, countRow)
        guard rc == SQLITE_OK else { return (nil, rc) }
        let hits = EstimatedBM25.estimatedRows(counted, maxRowid: maxRowid, rowCount: rows)
        statistics.idf.append(EstimatedBM25.idf(hits: hits, rows: rows))
    }
    rc = setAuxdata(context, Unmanaged.passRetained(statistics).toOpaque(), releaseStatistics)
    // On failure FTS5 has called the release already.
    return rc == SQLITE_OK ? (statistics, SQLITE_OK) : (nil, rc)
}

/// The function FTS5 calls for each row (see ``EstimatedBM25``).
private let rankFunction: fts5_extension_function = { api, context, result, count, values in
    guard let fts = api?.pointee, let context, let values else {
        sqlite3_result_error_code(result, SQLITE_MISUSE)
        return
    }
    let (found, status) = statistics(fts, context, values, count)
    guard let statistics = found, let instCount = fts.xInstCount, let inst = fts.xInst, let columnSize = fts.xColumnSize else {
        sqlite3_result_error_code(result, status == SQLITE_OK ? SQLITE_ERROR : status)
        return
    }
    let (k1, b) = (1.2, 0.75)
    for i in statistics.frequencies.indices { statistics.frequencies[i] = 0 }
    var instances: Int32 = 0
    var rc = instCount(context, &instances)
    var i: Int32 = 0
    while rc == SQLITE_OK && i < instances {
        var (phrase, column, offset): (Int32, Int32, Int32) = (0, 0, 0)
        rc = inst(context, i, &phrase, &column, &offset)
        if rc == SQLITE_OK, statistics.frequencies.indices.contains(Int(phrase)) {
            // The weights follow maxRowid and countedRows.
            statistics.frequencies[Int(phrase)] += count > column + 2 ? sqlite3_value_double(values[Int(column) + 2]) : 1.0
        }
        i += 1
    }
    var size: Int32 = 0
    if rc == SQLITE_OK { rc = columnSize(context, -1, &size) }
    guard rc == SQLITE_OK else {
        sqlite3_result_error_code(result, rc)
        return
    }
    var score = 0.0
    let lengthFactor = statistics.averageSize > 0 ? Double(size) / statistics.averageSize : 0
    for (frequency, idf) in zip(statistics.frequencies, statistics.idf) {
        score += idf * (frequency * (k1 + 1)) / (frequency + k1 * (1 - b + b * lengthFactor))
    }
    sqlite3_result_double(result, -score)
}
