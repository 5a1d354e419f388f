import Foundation
import Notes
import RecordStore

/// The local changes not pushed yet, and the local token to save once they all are.
struct PendingChanges {
    /// Saved records (metadata), folders first, parents before children.
    var saved: [RecordMetadata]
    /// Names of records deleted locally that the server still holds.
    var deleted: [String]
    /// The local token these were read at.
    var token: ChangeToken

    var count: Int { saved.count + deleted.count }
}

extension SyncEngine {
    /// The local changes the server has not seen: records whose change tag is not the one last
    /// synced, and synced records gone locally. Reads the changes since ``SyncState/localToken``,
    /// or every record when there is none or it expired.
    ///
    /// - Throws: ``SyncError/store(_:)``.
    func pendingChanges() throws(SyncError) -> PendingChanges {
        try Self.pendingChanges(database: database, state: state)
    }

    static func pendingChanges(database: RecordDatabase, state: SyncState) throws(SyncError) -> PendingChanges {
        var changes: ChangeSet?
        if let text = state.localToken, let token = ChangeToken(stringValue: text) { changes = try? database.changes(since: token) }
        let isFull = changes == nil
        let set: ChangeSet
        if let changes {
            set = changes
        } else {
            do { set = try database.changes(since: nil) } catch { throw .store(error) }
        }
        let saved = set.changed.filter {
            $0.recordType != AppliedPageMarker.recordType  // this machine's own bookkeeping
                && $0.recordChangeTag != state.records[$0.recordID.recordName]?.localTag
        }
        let candidates = isFull ? Array(state.records.keys) : set.deleted.map { $0.recordName }
        let deleted = candidates.filter { state.records[$0] != nil && database.metadata(for: RecordID(recordName: $0)) == nil }
        return PendingChanges(saved: parentsFirst(saved, database: database), deleted: deleted.sorted(), token: set.token)
    }

    /// Folders before other records, each folder after its parent, so that a peer fetching a page
    /// finds every record's folder already there.
    static func parentsFirst(_ records: [RecordMetadata], database: RecordDatabase) -> [RecordMetadata] {
        func depth(_ metadata: RecordMetadata) -> Int {
            var depth = 0
            var current = metadata
            while depth < 1000, let parent = current.field(FieldName.parent)?.referenceValue?.recordID,
                let next = database.metadata(for: parent)
            {
                depth += 1
                current = next
            }
            return depth
        }
        let folders = records.filter { $0.recordType == Folder.recordType }.map { ($0, depth($0)) }.sorted { $0.1 < $1.1 }.map(\.0)
        return folders + records.filter { $0.recordType != Folder.recordType }
    }
}
