/// The large fields a partial record leaves out, with their byte sizes (``Record/omittedSizes``).
///
/// A small map that holds its first field inline: nearly every partial record leaves out exactly
/// one field (a note's text), and the index holds one partial record per record, so a dictionary
/// here would be one more allocation (about 110 bytes) for each of 100,000 or 1,000,000 records.
struct OmittedFields: Sendable, Hashable {
    /// The first field, inline; nil when the map is empty.
    private var firstKey: String?
    private var firstSize = 0
    /// Every other field (rare).
    private var rest: [String: Int] = [:]

    init() {}

    init(_ sizes: [String: Int]) {
        for (key, size) in sizes { self[key] = size }
    }

    var isEmpty: Bool { firstKey == nil }

    var count: Int { isEmpty ? 0 : 1 + rest.count }

    subscript(key: String) -> Int? {
        get { firstKey == key ? firstSize : rest[key] }
        set {
            if firstKey == key {
                if let newValue {
                    firstSize = newValue
                } else if let (nextKey, nextSize) = rest.first {
                    // Keep the first slot filled while any field is left.
                    rest[nextKey] = nil
                    (firstKey, firstSize) = (nextKey, nextSize)
                } else {
                    (firstKey, firstSize) = (nil, 0)
                }
            } else if let newValue, firstKey == nil {
                (firstKey, firstSize) = (key, newValue)
            } else if !isEmpty {
                rest[key] = newValue
            }
        }
    }

    var keys: [String] { firstKey.map { [$0] + rest.keys } ?? [] }

    var dictionary: [String: Int] {
        guard let firstKey else { return [:] }
        var all = rest
        all[firstKey] = firstSize
        return all
    }

    // Equal maps may hold their fields in different slots: compare and hash the contents.
    static func == (a: OmittedFields, b: OmittedFields) -> Bool { a.dictionary == b.dictionary }

    func hash(into hasher: inout Hasher) { hasher.combine(dictionary) }
}
