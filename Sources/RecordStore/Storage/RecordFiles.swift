import Foundation
import Synchronization

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

private let tempCounter = Atomic<UInt64>(0)

/// Reading, writing and scanning the per-record JSON files under `records/`.
enum RecordFiles {
    /// A temp path in `<db>/tmp`, unique in this process and across processes.
    static func tempPath(_ layout: DatabaseLayout) -> String {
        let n = tempCounter.add(1, ordering: .relaxed).newValue
        return "\(layout.temp)/\(getpid())-\(n).tmp"
    }

    static func write(_ record: Record, layout: DatabaseLayout, durable: Bool) throws(RecordStoreError) {
        try Sys.writeFileAtomically(
            layout.recordPath(record.recordID.recordName), RecordCoding.encode(record), temp: tempPath(layout),
            durable: durable)
    }

    /// Reads one record file. Missing or damaged files throw ``RecordStoreError/damagedRecord(_:path:reason:)``.
    static func read(_ id: RecordID, layout: DatabaseLayout) throws(RecordStoreError) -> Record {
        let path = layout.recordPath(id.recordName)
        let file: Data?
        do { file = try Sys.readFile(path, limit: DatabaseLayout.recordFileLimit) } catch {
            if Sys.isOverLimit(error), case .damagedRecord(_, _, let reason) = error {
                throw .damagedRecord(id, path: path, reason: reason)
            }
            throw error
        }
        guard let data = file else {
            throw .damagedRecord(id, path: path, reason: "record file is missing")
        }
        let result = data.withUnsafeBytes { bytes in
            Result { () throws(RecordStoreError) in try record(id, fromFile: bytes, path: path) }
        }
        return try result.get()
    }

    /// The record a record file's bytes hold: the one place that turns a record file into a
    /// `Record` (``read(_:layout:)`` and the parallel reads of queries both come here).
    ///
    /// - Throws: ``RecordStoreError/damagedRecord(_:path:reason:)`` when the bytes do not decode
    ///   or hold another record.
    static func record(_ id: RecordID, fromFile bytes: UnsafeRawBufferPointer, path: @autoclosure () -> String) throws(RecordStoreError)
        -> Record
    {
        let record: Record
        do { record = try RecordCoding.decode(bytes) } catch {
            throw .damagedRecord(id, path: path(), reason: error.description)
        }
        guard record.recordID == id else {
            throw .damagedRecord(id, path: path(), reason: "file holds record \(record.recordID)")
        }
        return record
    }

    /// Every file under `records/` with what it holds, handed to `body` one at a time (so memory
    /// holds one record, however many there are). Files whose name does not match the record
    /// inside are reported as damaged (a foreign or misplaced file); files over
    /// ``DatabaseLayout/recordFileLimit`` are reported, not read.
    static func scan(_ layout: DatabaseLayout, _ body: (String, Result<Record, RecordDecodingError>) -> Void) {
        let fm = FileManager.default
        let shards = ((try? fm.contentsOfDirectory(atPath: layout.records)) ?? []).sorted()
        for shard in shards {
            let dir = layout.records + "/" + shard
            var isDir: ObjCBool = false
            guard fm.fileExists(atPath: dir, isDirectory: &isDir), isDir.boolValue else {
                body(dir, .failure(RecordDecodingError("not a shard directory")))
                continue
            }
            for name in ((try? fm.contentsOfDirectory(atPath: dir)) ?? []).sorted() {
                let path = dir + "/" + name
                do {
                    guard let data = try Sys.readFile(path, limit: DatabaseLayout.recordFileLimit) else { continue }
                    let record = try RecordCoding.decode(data)
                    guard layout.recordPath(record.recordID.recordName) == path else {
                        throw RecordDecodingError("file name does not match record \(record.recordID)")
                    }
                    body(path, .success(record))
                } catch let error as RecordDecodingError {
                    body(path, .failure(error))
                } catch let error as RecordStoreError {
                    if case .damagedRecord(_, _, let reason) = error {
                        body(path, .failure(RecordDecodingError(reason)))
                    } else {
                        body(path, .failure(RecordDecodingError(error.description)))
                    }
                } catch {
                    body(path, .failure(RecordDecodingError("\(error)")))
                }
            }
        }
    }
}
