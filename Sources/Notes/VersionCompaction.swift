import Foundation
import RecordStore

/// Keeps versions of text notes as deltas of their newer neighbour where that is smaller
/// (``VersionDelta``): run after each prune (hourly in a mount, `notesfs history prune`). A
/// version's bytes read back the same either way (``VersionHistory/fullVersion(_:in:)``).
///
/// Each note's versions are walked newest first; a version that keeps its whole text becomes a
/// delta of the next newer one when the delta takes less than half its bytes and the chain behind
/// it stays under ``VersionDelta/maxDepth``. The newest version of a note always keeps its text.
/// Every rewrite is a save with its change tag (a version changed meanwhile is left for the next
/// run), in batches; a delete of a base makes its deltas whole in the same commit
/// (``VersionPolicy``), so nothing a crash or another machine does leaves a delta without its base.
public enum VersionCompaction {
    public struct Result: Sendable, Equatable {
        /// Versions rewritten as deltas.
        public var compacted = 0
        /// Their bytes before (whole texts) and after (deltas).
        public var bytesBefore: Int64 = 0
        public var bytesAfter: Int64 = 0
    }

    static let batch = 200

    /// - Throws: ``NotesError/store(_:)`` when a batch cannot be saved for a reason other than a
    ///   version changed meanwhile.
    @discardableResult
    public static func compact(in database: RecordDatabase) throws(NotesError) -> Result {
        var result = Result()
        var pending: [(record: Record, before: Int64, after: Int64)] = []
        // How many versions each note has, in one pass that keeps a count a note, not every
        // version's metadata (a database of 100,000 deleted notes has 100,000 versions); only a
        // note with two or more can have a version to make a delta of.
        var counts: [String: Int] = [:]
        database.forEachMetadata(ofType: Version.recordType) { counts[$0.field("note")?.stringValue ?? "", default: 0] += 1 }
        for (note, count) in counts.sorted(by: { $0.key < $1.key }) where !note.isEmpty && count > 1 {
            let list = database.metadata(ofType: Version.recordType, whereField: "note", equals: note).filter {
                $0.field("note")?.stringValue == note  // canonically equal names are other notes
            }
            // Newest first, as `VersionHistory.versions` orders them (date, then name), reversed.
            let versions = list.sorted {
                (VersionHistory.date(of: $0), $0.recordID.recordName) > (VersionHistory.date(of: $1), $1.recordID.recordName)
            }
            // Read down to the oldest version that keeps its whole text (and is not the newest):
            // past it every version is a delta already (or an asset) and stays as it is.
            guard let oldestWhole = versions.indices.dropFirst().last(where: { keepsWholeText(versions[$0]) }) else { continue }
            // How many deltas follow each version (older, each of the one before): a version made a
            // delta lengthens all their chains, which must stay within ``VersionDelta/maxDepth``.
            var deltasBelow = Array(repeating: 0, count: versions.count)
            for i in versions.indices.reversed().dropFirst() where isDelta(versions[i + 1]) { deltasBelow[i] = deltasBelow[i + 1] + 1 }
            var newer: (name: String, text: String, depth: Int)?
            for (position, version) in versions[...oldestWhole].enumerated() {
                guard version.field("content") == nil, let record = try? database.record(for: version.recordID) else {
                    newer = nil
                    continue
                }
                let name = version.recordID.recordName
                let text: String
                let depth: Int
                if let delta = try? VersionDelta(record: record) {
                    // A delta of the version just read: made from its text, else read whole.
                    if let newer, delta.base == newer.name, let made = delta.apply(to: newer.text) {
                        (text, depth) = (made, newer.depth + 1)
                    } else if let whole = try? VersionHistory.materialized(record, in: database), let made = whole["text"]?.stringValue {
                        (text, depth) = (made, VersionDelta.maxDepth)  // a chain not followed here: nothing is added onto it
                    } else {
                        newer = nil
                        continue
                    }
                } else if let whole = record["text"]?.stringValue {
                    text = whole
                    if let base = newer, base.depth + 1 + deltasBelow[position] < VersionDelta.maxDepth {
                        let delta = VersionDelta(text: whole, baseText: base.text, base: base.name)
                        if delta.storedBytes * 2 < whole.utf8.count {
                            pending.append((delta.store(in: record), Int64(whole.utf8.count), Int64(delta.storedBytes)))
                            depth = base.depth + 1
                        } else {
                            depth = 0
                        }
                    } else {
                        depth = 0
                    }
                } else {
                    newer = nil
                    continue
                }
                newer = (name, text, depth)
                if pending.count >= batch { try save(&pending, in: database, result: &result) }
            }
        }
        try save(&pending, in: database, result: &result)
        return result
    }

    /// Whether the version is kept as a delta, from its metadata.
    static func isDelta(_ metadata: RecordMetadata) -> Bool {
        metadata.field("content") == nil && metadata.field("text") == nil && metadata.sizes["text"] == nil
            && metadata.field("deltaBase") != nil
    }

    /// Whether the version keeps its text whole (not a delta, not an asset), from its metadata.
    static func keepsWholeText(_ metadata: RecordMetadata) -> Bool {
        metadata.field("content") == nil && (metadata.field("text") != nil || metadata.sizes["text"] != nil)
    }

    /// Saves a batch of rewritten versions and counts them; a batch that meets a version changed
    /// meanwhile is dropped: the next run makes it again.
    private static func save(
        _ pending: inout [(record: Record, before: Int64, after: Int64)], in database: RecordDatabase, result: inout Result
    ) throws(NotesError) {
        guard !pending.isEmpty else { return }
        defer { pending = [] }
        do {
            try database.modify(saving: pending.map(\.record), reason: .prune)
        } catch {
            switch error {
            case .serverRecordChanged, .unknownItem: return
            default: throw .store(error)
            }
        }
        result.compacted += pending.count
        result.bytesBefore += pending.reduce(0) { $0 + $1.before }
        result.bytesAfter += pending.reduce(0) { $0 + $1.after }
    }
}
