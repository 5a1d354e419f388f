import Foundation
import Index
import RecordStore

/// When the index holds every commit without the store being opened: the rule a search that
/// opens nothing but the index (the CLI's fast path) relies on, and the stamp a catch-up keeps
/// for it.
///
/// A catch-up that reaches the store's current token stores beside it the journal's stamp
/// (``RecordDatabase/journalStamp(path:)``, read before it caught up). The index is then current
/// while the journal's stamp is unchanged (one `stat`), or, when it changed, while the journal's
/// last token (``RecordDatabase/peekToken(path:)``) is still the index's token. A build under way
/// has no token yet: never current.
extension NotesSearchIndex {
    /// Whether `index` holds every commit the journal of the database at `databasePath` has.
    /// Call it inside a read transaction (``TextIndex/read(_:)``), so the answer holds for what
    /// the transaction reads.
    /// - Throws: ``SQLiteError`` when the index cannot be read.
    public static func isCurrent(_ index: TextIndex, databasePath: String) throws(SQLiteError) -> Bool {
        guard try !index.isBuilding(), let token = try index.token() else { return false }
        let stamp = RecordDatabase.journalStamp(path: databasePath)
        if stamp != nil, try index.journalStamp() == stamp { return true }
        return RecordDatabase.peekToken(path: databasePath) == token
    }

    /// Searches the index of the database at `databasePath` without opening the store, when the
    /// index is current (``isCurrent(_:databasePath:)``) and knows `folder` (a path as the mount
    /// shows it); nil when it cannot answer so (no index, behind, damaged or busy, a folder it
    /// does not know): then ``search(_:folder:limit:snippets:progress:)`` on the open store does.
    public static func searchIfCurrent(_ query: SearchQuery, folder: String?, limit: Int?, databasePath: String) -> [SearchHit]? {
        readIfCurrent(databasePath: databasePath) { (index) throws(SQLiteError) -> [SearchHit]? in
            if let folder, !folder.isEmpty, try !index.hasFolder(path: folder) { return nil }
            return try index.search(query, folder: folder, limit: limit)
        } ?? nil
    }

    /// Stores the journal's stamp beside a token the index already holds (nothing when it is there).
    func recordJournalStamp(_ stamp: String?, in index: TextIndex, token: ChangeToken) throws(SQLiteError) {
        guard let stamp, try index.read({ () throws(SQLiteError) in try index.journalStamp() }) != stamp else { return }
        try index.update { (w) throws(SQLiteError) in
            if try w.token() == token { try w.setMeta("journal", stamp) }
        }
    }
}
