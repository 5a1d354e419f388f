import Foundation

/// The last version of a record both this database and the server agreed on.
///
/// Its base (the payload, note text included) is held in memory only while the record has
/// changed since the state was last saved; otherwise it stays in the record's file under
/// `<db>/sync/records/` (``SyncedRecordFiles``) and ``base`` reads it from there.
public struct SyncedRecord: Sendable, Equatable {
    public var recordType: String
    /// The server's seq (change tag) of that version.
    public var serverSeq: Int64
    /// The ``serverSeq`` of a base kept through a reset of the server, not yet matched with the
    /// server's record (``SyncEngine/confirmedAfterReset(_:server:)``).
    static let unconfirmedSeq: Int64 = -1
    /// The local change tag of that version; nil when the local record has changed from it in a
    /// way this engine made (a merge) and still has to push.
    public var localTag: String?
    /// Where the base is: in memory, or in the record file of `recordName` in `directory`.
    enum Base: Sendable, Equatable {
        case text(String)
        case file(directory: String, recordName: String)
    }
    var storedBase: Base

    public init(recordType: String, serverSeq: Int64, localTag: String?, base: String) {
        self.init(recordType: recordType, serverSeq: serverSeq, localTag: localTag, storedBase: .text(base))
    }

    init(recordType: String, serverSeq: Int64, localTag: String?, storedBase: Base) {
        self.recordType = recordType
        self.serverSeq = serverSeq
        self.localTag = localTag
        self.storedBase = storedBase
    }

    /// That version's payload JSON (``RecordPayload/jsonText``): the base of a three-way merge;
    /// read from the record's file unless it is in memory.
    ///
    /// - Throws: ``SyncError/state(path:reason:)`` when the file cannot be read, is damaged, or no
    ///   longer holds this version (another process synced the database since it was indexed).
    public var base: String {
        get throws(SyncError) {
            switch storedBase {
            case .text(let text): return text
            case .file(let directory, let recordName):
                let file = try SyncedRecordFiles.read(recordName, in: directory)
                guard file.header.recordType == recordType, file.header.serverSeq == serverSeq, file.header.localTag == localTag else {
                    throw .state(
                        path: SyncedRecordFiles.path(of: recordName, in: directory),
                        reason: "changed by another process since this one indexed it: sync again")
                }
                return file.base
            }
        }
    }
}
