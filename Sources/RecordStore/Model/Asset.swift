/// A file stored beside the records by content hash, as `CKAsset`.
///
/// Create one with ``RecordDatabase/makeAsset(_:)``; read it with ``RecordDatabase/assetData(_:)``.
public struct Asset: Sendable, Hashable {
    /// Lower-case hex SHA-256 of the content.
    public var sha256: String
    /// Content length in bytes.
    public var size: Int64

    public init(sha256: String, size: Int64) {
        self.sha256 = sha256
        self.size = size
    }
}
