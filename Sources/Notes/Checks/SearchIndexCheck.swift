import Foundation
import Index
import RecordStore

/// What `fsck` says of the full-text index (`<db>/indexes/text.sqlite`), and its repair.
public enum SearchIndexCheck {
    /// Problems of the index file: not an index, damaged pages or FTS5 structures; a token ahead
    /// of the journal; rows that do not agree with the records (``NotesSearchIndex/audit()``).
    /// None when it is sound, absent or of another format (built or rebuilt on first use).
    public static func problems(_ database: RecordDatabase) -> [String] {
        let path = TextIndex.path(forDatabaseAt: database.path)
        guard FileManager.default.fileExists(atPath: path) else { return [] }
        do throws(SQLiteError) {
            let index = try TextIndex(databasePath: database.path, create: false)
            defer { index.close() }
            if let damage = index.damage() {
                return ["search index \(path) is damaged (\(damage)); 'fsck --repair' or 'reindex' rebuilds it"]
            }
            return NotesSearchIndex(database: database).audit().map {
                "search index \(path) does not agree with the records: \($0); 'fsck --repair' or 'reindex' rebuilds it"
            }
        } catch  where error.isOtherFormat {
            return []  // an older format (after an upgrade): the next search rebuilds it
        } catch {
            return ["search index \(path) cannot be read (\(error.description)); 'fsck --repair' or 'reindex' rebuilds it"]
        }
    }

    /// Discards the index and builds it again; the problems left (none when it worked).
    public static func rebuild(_ database: RecordDatabase) -> [String] {
        TextIndex.discard(databasePath: database.path)
        do throws(SQLiteError) {
            try NotesSearchIndex(database: database).catchUp()
            return []
        } catch {
            return ["search index could not be rebuilt: \(error.description)"]
        }
    }
}
