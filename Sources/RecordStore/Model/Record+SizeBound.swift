/// A bound on what a record weighs as JSON, cheap to compute (no encoding): for batching commits
/// and pushes by bytes.
extension Record {
    /// At least the bytes of the record's fields as JSON: strings with their escapes (a control
    /// character, quote or backslash takes up to 6 bytes), bytes in base64, 64 for each key's
    /// frame and 256 for any other value, and 1 KiB for the rest.
    public var jsonSizeBound: Int {
        1024 + fields.reduce(0) { $0 + 64 + $1.key.utf8.count * 6 + Self.jsonSizeBound($1.value) }
    }

    private static func jsonSizeBound(_ value: FieldValue) -> Int {
        switch value {
        case .string(let text): 2 + text.utf8.reduce(0) { $0 + ($1 < 0x20 || $1 == 0x22 || $1 == 0x5C ? 6 : 1) }
        case .bytes(let data): 2 + (data.count + 2) / 3 * 4
        case .list(let items): 2 + items.reduce(0) { $0 + 1 + jsonSizeBound($1) }
        default: 256
        }
    }
}
