import Foundation
import Index
import RecordStore
import Synchronization

/// How a search was answered.
public struct SearchResults: Sendable {
    public var hits: [SearchHit]
    /// Nil when the index answered; otherwise why it could not, and the answer came from reading
    /// every record (slower, same results).
    public var scannedBecause: String?
}

extension NotesSearchIndex {
    /// Searches after catching the index up (building it when it has none, or waiting for the
    /// build under way), so every committed change is seen. When the index cannot be written (a
    /// read-only database, a full disk, a damaged file that cannot be replaced), the records are
    /// read into a temporary index instead: the same rules, the same answer. Best first (see
    /// ``TextIndex/search(_:folder:limit:snippets:)``); `limit` nil: every match.
    ///
    /// - Throws: ``SQLiteError`` only when neither way works.
    public func search(
        _ query: SearchQuery, folder: String? = nil, limit: Int?, snippets: Bool = true, progress: ((Int, Int) -> Void)? = nil
    ) throws(SQLiteError) -> SearchResults {
        do throws(SQLiteError) {
            try catchUp(progress: progress)
            if let hits = try withReader({ (index) throws(SQLiteError) in
                try index.search(query, folder: folder, limit: limit, snippets: snippets)
            }) {
                return SearchResults(hits: hits, scannedBecause: nil)
            }
            return try searchByReading(query, folder: folder, limit: limit, snippets: snippets, because: "the index could not be opened")
        } catch {
            return try searchByReading(query, folder: folder, limit: limit, snippets: snippets, because: error.description)
        }
    }

    /// A search over a temporary index of every record (the same rules as the index's, without
    /// keeping one): `because` says why, in the result.
    ///
    /// - Throws: ``SQLiteError`` when the temporary index cannot be written.
    public func searchByReading(_ query: SearchQuery, folder: String? = nil, limit: Int?, snippets: Bool = true, because reason: String)
        throws(SQLiteError) -> SearchResults
    {
        let temporary = try TextIndex.temporary()
        defer { temporary.close() }
        let contents = FolderContents(database: database)
        let ids = database.metadata { Self.rowTypes.contains($0.recordType) }.map(\.recordID)
        try temporary.update { (w) throws(SQLiteError) in
            for start in stride(from: 0, to: ids.count, by: Self.buildBatch) {
                try save(Array(ids[start..<min(ids.count, start + Self.buildBatch)]), to: w, contents: contents)
            }
            try w.setFolderPaths(contents.folderPaths())
        }
        return SearchResults(
            hits: try temporary.search(query, folder: folder, limit: limit, snippets: snippets), scannedBecause: reason)
    }
}

extension NotesSearchIndex: QueryCandidateSource {
    /// Notes' `text` substrings, from the trigram table (see ``TextIndex/bodyCandidates(_:)``).
    public func candidates(recordType: String, substrings: [(key: String, needle: String)]) -> QueryCandidates? {
        guard recordType == Note.recordType, substrings.contains(where: { $0.key == FieldName.text }) else { return nil }
        let needles = substrings.map { $0.key == FieldName.text ? $0.needle : "" }
        // A build under way has no token (it is set when the build ends): nil, so the query scans.
        guard let answer = try? withReader({ (index) throws(SQLiteError) in try index.bodyCandidates(needles) }), let token = answer.token
        else { return nil }
        let names = zip(substrings, answer.names).map { pair in pair.0.key == FieldName.text ? pair.1 : nil }
        return QueryCandidates(token: token, names: names, alwaysTested: answer.unreadable)
    }
}
