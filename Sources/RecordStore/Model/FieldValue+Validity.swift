import Foundation

/// The rules a value must meet to be stored: the store's decoders (``RecordCoding``) refuse what
/// breaks them when they read a record back, ``RecordDatabase/modify(saving:deleting:savePolicy:asExternalChange:)``
/// refuses to commit it, and a sync engine checks every value from its server with them before it
/// plans anything. One set of rules, so that nothing committed can fail to read back.
extension FieldValue {
    /// How deep lists may nest (a list in a list is depth 2). Every level is two levels of JSON
    /// (`{"type":"list","value":[…]}`), and the JSON readers stop at 512.
    public static let maximumListDepth = 64

    /// Why this value could not be stored and read back; nil when it can.
    public var validityProblem: String? { problem(depth: 1) }

    private func problem(depth: Int) -> String? {
        switch self {
        case .date(let date): Self.dateProblem(date.timeIntervalSince1970)
        case .asset(let asset): asset.validityProblem
        case .reference(let reference): reference.recordID.recordName.isEmpty ? "a reference to an empty record name" : nil
        case .list(let items): Self.problem(of: items, depth: depth)
        case .string, .int64, .double, .bool, .bytes: nil
        }
    }

    /// The first problem of a list's items (a plain loop: each item is looked at once).
    private static func problem(of items: [FieldValue], depth: Int) -> String? {
        guard depth <= maximumListDepth else { return "lists nested deeper than \(maximumListDepth)" }
        for item in items {
            if let problem = item.problem(depth: depth + 1) { return problem }
        }
        return nil
    }

    /// Why `seconds` since 1970 is not a date a record can hold: not finite (JSON has no number for
    /// it). A finite date far from now is kept as it is; the mount and the CLI clamp what they show.
    static func dateProblem(_ seconds: Double) -> String? {
        seconds.isFinite ? nil : "date \(seconds) is not a finite time"
    }
}

extension Asset {
    /// Whether `text` is a SHA-256 as assets are named: 64 lower-case hex digits (ASCII), so that
    /// it can name a file and nothing else.
    public static func isValidHash(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    /// Why this asset could not be stored; nil when it can.
    public var validityProblem: String? {
        if !Self.isValidHash(sha256) { return "asset hash is not 64 lower-case hex digits" }
        if size < 0 { return "asset size \(size) is negative" }
        return nil
    }
}

extension Record {
    /// Why this record could not be stored and read back (a field, a date); nil when it can.
    public var validityProblem: String? {
        if recordID.recordName.isEmpty { return "empty record name" }
        if recordType.isEmpty { return "empty record type" }
        for date in [creationDate, storedModificationDate].compactMap({ $0 }) {
            if let problem = FieldValue.dateProblem(date.timeIntervalSince1970) { return problem }
        }
        for (key, value) in fields {
            if let problem = value.validityProblem { return "field \(key): \(problem)" }
        }
        return nil
    }
}
