import RecordStore

/// How a file's bytes are kept in its record: a note's valid UTF-8 of at most
/// `Note.maxInlineTextBytes` as `text` (what queries and search see); anything else (other bytes,
/// larger notes, every attachment) losslessly as the `content` asset.
public enum StoredBytes: Sendable, Equatable {
    case text(String)
    case asset(Asset)

    /// Puts these bytes into `record` (a `Note` drops the field it does not use).
    public func apply(to record: inout Record) {
        switch self {
        case .text(let text):
            record[FieldName.text] = .string(text)
            record[FieldName.content] = nil
        case .asset(let asset):
            record[FieldName.content] = .asset(asset)
            if record.recordType == Note.recordType { record[FieldName.text] = nil }
        }
    }

    /// The bytes `record` holds: its `content` asset when it has one, else its `text` ("" if absent).
    public init(of record: Record) {
        if let asset = record[FieldName.content]?.assetValue {
            self = .asset(asset)
        } else {
            self = .text(record[FieldName.text]?.stringValue ?? "")
        }
    }
}
