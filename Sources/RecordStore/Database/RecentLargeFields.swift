/// The large fields (those the index leaves out, ``RecordMetadata/isPartial``) of the records this
/// process's last commits saved, by record name and change tag, up to ``limit`` bytes of JSON:
/// a read of a record just saved (the text indexer's, a save's version hook, a rename's plan)
/// takes them from here instead of opening, reading and decoding its record file.
///
/// A change tag names one commit, and a commit saves a record once, so fields kept for a tag are
/// that version's: ``RecordDatabase/merge(_:path:file:)`` would make the same record from its file.
/// Guarded by ``RecordDatabase/recentLargeFields``, a leaf lock (a commit fills it holding the
/// state lock).
struct RecentLargeFields {
    /// The most JSON bytes of records kept (their decoded fields take about as much again).
    static let limit = 4 << 20

    private var byName: [String: (tag: String, fields: [String: FieldValue], bytes: Int)] = [:]
    /// Record names in the order they were kept (a name saved again appears twice: only the
    /// occurrence whose tag is still kept counts), from `head` on.
    private var order: [(name: String, tag: String)] = []
    private var head = 0
    private var bytes = 0

    /// Keeps the large fields of `record`, saved at its change tag, whose JSON took `size` bytes;
    /// `omitted` names them (the index's metadata of the version saved).
    mutating func keep(_ record: Record, omitted: OmittedFields, size: Int) {
        guard let tag = record.recordChangeTag, size <= Self.limit else { return forget(record.recordID.recordName) }
        var fields: [String: FieldValue] = [:]
        for key in omitted.keys {
            guard let value = record.fields[key] else { return forget(record.recordID.recordName) }
            fields[key] = value
        }
        forget(record.recordID.recordName)
        byName[record.recordID.recordName] = (tag, fields, size)
        order.append((record.recordID.recordName, tag))
        bytes += size
        while bytes > Self.limit, head < order.count {
            let oldest = order[head]
            head += 1
            if byName[oldest.name]?.tag == oldest.tag { forget(oldest.name) }
        }
        if head > 1024, head * 2 > order.count {
            order.removeFirst(head)
            head = 0
        }
    }

    /// Drops what is kept of a record (deleted, or saved in a way not kept).
    mutating func forget(_ name: String) {
        guard let kept = byName.removeValue(forKey: name) else { return }
        bytes -= kept.bytes
    }

    /// The record `metadata` describes, whole, when its large fields are kept for its change tag.
    func record(_ metadata: RecordMetadata) -> Record? {
        guard let tag = metadata.recordChangeTag, let kept = byName[metadata.recordID.recordName], kept.tag == tag else { return nil }
        let keys = metadata.omitted.keys
        var record = metadata.record(reservingCapacity: keys.count)
        for key in keys {
            guard let value = kept.fields[key] else { return nil }
            record.fields[key] = value
        }
        record.omitted = OmittedFields()
        return record
    }
}
