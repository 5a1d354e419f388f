import Foundation

/// The index snapshot, `index.jsonl`: a header line, then one line of metadata per record.
///
/// Written at a checkpoint (temp + fsync + rename + directory fsync) so that opening a database
/// reads one file instead of every record file; the journal holds what came after it.
enum Snapshot {
    struct Header {
        var seq: UInt64
        var generation: UInt64
        var nextIdentity: UInt64
        var tombstoneHorizon: UInt64
    }

    static func write(_ index: RecordIndex, generation: UInt64, to path: String, temp: String) throws(RecordStoreError) -> Int {
        var w = JSONWriter(capacity: 64 + index.entries.count * 300)
        var first = true
        w.raw("{")
        w.key("snapshot", first: &first)
        w.number(Int64(1))
        w.key("seq", first: &first)
        w.number(index.seq)
        w.key("generation", first: &first)
        w.number(generation)
        w.key("nextIdentity", first: &first)
        w.number(index.nextIdentity)
        w.key("tombstoneHorizon", first: &first)
        w.number(index.tombstoneHorizon)
        w.key("tombstones", first: &first)
        w.raw("[")
        for (i, tombstone) in index.tombstones.enumerated() {
            if i > 0 { w.raw(",") }
            RecordCoding.write(tombstone.metadata.record, sizes: tombstone.metadata.sizes, seq: tombstone.seq, into: &w)
        }
        w.raw("]}\n")
        for metadata in index.entries.values {
            RecordCoding.write(metadata.record, sizes: metadata.sizes, seq: metadata.seq, into: &w)
            w.raw("\n")
        }
        try Sys.writeFileAtomically(path, w.bytes, temp: temp, durable: true)
        return w.bytes.count
    }

    /// Loads a snapshot; nil when there is none. A damaged snapshot throws.
    static func load(from path: String) throws(RecordStoreError) -> (RecordIndex, Header, bytes: Int)? {
        guard let data = try Sys.readFile(path) else { return nil }
        func damaged(_ why: String) -> RecordStoreError { .damagedRecord(nil, path: path, reason: why) }
        var index = RecordIndex()
        var header: Header?
        let result: Result<Void, RecordStoreError> = data.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            var start = 0
            var lineNumber = 0
            while start < bytes.count {
                var end = start
                while end < bytes.count, bytes[end] != 0x0A { end += 1 }
                guard end < bytes.count else { return .failure(damaged("truncated last line")) }
                lineNumber += 1
                let line = Data(UnsafeBufferPointer(rebasing: bytes[start..<end]))
                start = end + 1
                do {
                    let json = try JSON.parse(line)
                    if header == nil {
                        guard json["snapshot"]?.int64 == 1, let seq = json["seq"]?.uint64,
                            let generation = json["generation"]?.uint64,
                            let next = json["nextIdentity"]?.uint64, let horizon = json["tombstoneHorizon"]?.uint64
                        else { return .failure(damaged("bad header")) }
                        header = Header(seq: seq, generation: generation, nextIdentity: next, tombstoneHorizon: horizon)
                        for item in json["tombstones"]?.array ?? [] {
                            let record = try RecordCoding.decode(item)
                            let extras = try RecordCoding.decodeIndexExtras(item)
                            index.tombstones.append((extras.seq, RecordMetadata(record: record, sizes: extras.sizes, seq: extras.seq)))
                        }
                        continue
                    }
                    let record = try RecordCoding.decode(json)
                    let extras = try RecordCoding.decodeIndexExtras(json)
                    index.insert(RecordMetadata(record: record, sizes: extras.sizes, seq: extras.seq))
                } catch {
                    return .failure(damaged("line \(lineNumber): \(error)"))
                }
            }
            return .success(())
        }
        try result.get()
        guard let header else { throw damaged("empty") }
        index.seq = header.seq
        index.nextIdentity = max(index.nextIdentity, header.nextIdentity)
        index.tombstoneHorizon = header.tombstoneHorizon
        return (index, header, data.count)
    }
}

extension RecordIndex {
    /// Adds a record's metadata as loaded (from a snapshot or a record file).
    mutating func insert(_ metadata: RecordMetadata) {
        let name = metadata.recordID.recordName
        entries[name] = metadata
        if let identity = metadata.record.identity {
            names[identity] = name
            if identity >= nextIdentity { nextIdentity = identity + 1 }
        }
        for (key, ref) in metadata.record.references {
            referrers[ref.recordID.recordName, default: [:]][key, default: []].insert(name)
        }
    }
}
