import Foundation
import POSIX

@testable import RecordStore

/// The writer of `index.jsonl` as versions before the metadata index wrote it: what the tests of
/// the snapshot's loader, and of the migration that reads it once, start from.
extension Snapshot {
    /// Writes `index` as the snapshot at `path` (temp + fsync + rename + directory fsync), in
    /// blocks of about ``writeBlock`` bytes: memory is one block, not the whole snapshot (tens of
    /// megabytes at 100,000 notes). Returns its size.
    static func write(_ index: RecordIndex, generation: UInt64, to path: String, temp: String) throws(RecordStoreError) -> Int {
        var total = 0
        try Sys.writeFileAtomically(path, temp: temp, durable: true) { (fd) throws(RecordStoreError) in
            var w = JSONWriter(capacity: writeBlock + (1 << 16))
            // The writer is passed in, not captured: `writeHeader` holds it inout while it flushes.
            func flush(_ w: inout JSONWriter) throws(RecordStoreError) {
                try Sys.writeAll(fd, w.bytes, path: temp)
                total += w.bytes.count
                w.bytes.removeAll(keepingCapacity: true)
            }
            try writeHeader(index, generation: generation, into: &w, flush: flush)
            // By position: each record's metadata written where it is, not copied out first.
            let values = index.entries.values
            for i in values.indices {
                values[i].write(into: &w)
                w.raw("\n")
                if w.bytes.count >= writeBlock { try flush(&w) }
            }
            try flush(&w)
        }
        return total
    }

    static let writeBlock = 1 << 20

    /// The header line: counters and the tombstones (up to ``RecordIndex/tombstoneLimit`` of them,
    /// megabytes after a mass delete), handed to `flush` a block at a time like the records.
    static func writeHeader(
        _ index: RecordIndex, generation: UInt64, into w: inout JSONWriter, flush: (inout JSONWriter) throws(RecordStoreError) -> Void
    ) throws(RecordStoreError) {
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
        for (i, tombstone) in index.tombstones(after: 0).enumerated() {
            if i > 0 { w.raw(",") }
            // As a record with no fields (older snapshots hold the whole metadata; both load).
            RecordCoding.write(
                Record(recordType: tombstone.recordType, recordID: tombstone.recordID), seq: tombstone.seq, into: &w)
            if w.bytes.count >= writeBlock { try flush(&w) }
        }
        w.raw("]}\n")
    }

}
