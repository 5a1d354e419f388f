/// A link from one record to another, as `CKRecord.Reference`.
public struct Reference: Sendable, Hashable {
    /// What happens to the referring record when the target is deleted.
    public enum Action: String, Sendable, Hashable {
        /// Nothing: the reference may dangle (fsck reports it).
        case none
        /// The referring record is deleted with its target, recursively, in the same modify.
        case deleteSelf
    }

    public var recordID: RecordID
    public var action: Action

    public init(recordID: RecordID, action: Action) {
        self.recordID = recordID
        self.action = action
    }

    public init(_ record: Record, action: Action) {
        self.init(recordID: record.recordID, action: action)
    }
}
