import Foundation
import Notes
import RecordStore

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// What a value from the server must meet beyond the store's own rules
/// (``RecordStore/FieldValue/validityProblem``) before anything is planned with it: bounds that
/// keep every sum, product and loop of the sync engine, the mount and the CLI far from the end of
/// their integer types.
enum ServerValueRules {
    /// The largest asset a server row may name (1 PiB): chunk counts and offsets stay exact, and
    /// no size shown in the mount or summed by retention comes near `Int64.max`.
    static let assetSizeLimit: Int64 = 1 << 50

    /// Why `value` (one field of a server row, lists included) cannot be applied; nil when it can.
    static func problem(of value: FieldValue) -> String? {
        for asset in value.assets where asset.size > assetSizeLimit {
            return "asset size \(asset.size) is over the \(assetSizeLimit) bytes an asset may hold"
        }
        return nil
    }
}

extension ServerValueRules {
    /// Why the server's version of a record (as the local record it would become) must be set
    /// aside although the store and the notes layer would take it: a size that is not the bytes'
    /// (an asset this database holds, a note history version's `size`).
    static func problem(of record: Record, in database: RecordDatabase) -> String? {
        for value in record.fields.values {
            for asset in value.assets {
                var info = stat()
                guard stat(database.assetPath(asset), &info) == 0 else { continue }  // downloaded and checked whole
                if Int64(info.st_size) != asset.size {
                    return "asset \(asset.sha256.prefix(12))… is \(info.st_size) bytes here, not the \(asset.size) the server's row says"
                }
            }
        }
        return versionSizeProblem(record)
    }

    /// Why a `Version`'s `size` is not the byte size of the content it holds (its text, its
    /// asset, or the text its delta makes); nil when it is, or when it has no size.
    static func versionSizeProblem(_ record: Record) -> String? {
        guard record.recordType == Version.recordType, let size = record["size"]?.int64Value else { return nil }
        let bytes: Int64
        if let asset = record[FieldName.content]?.assetValue {
            bytes = asset.size
        } else if let text = record[FieldName.text]?.stringValue {
            bytes = Int64(text.utf8.count)
        } else if let prefix = record["deltaPrefix"]?.int64Value, let suffix = record["deltaSuffix"]?.int64Value,
            let middle = record["deltaText"]?.stringValue, (0...Int64(Int32.max)).contains(prefix), (0...Int64(Int32.max)).contains(suffix)
        {
            bytes = prefix + suffix + Int64(middle.utf8.count)
        } else {
            return nil  // the notes layer's check refuses what is neither
        }
        return size == bytes ? nil : "version size \(size) is not the \(bytes) bytes it holds"
    }
}

extension ServerValueRules {
    /// How far past now a date from the server may lie: a later one is clamped to now plus this, so
    /// that a forged or fast clock does not win every ordering by date (and the mount shows a time
    /// it can hold).
    static let futureSlack: TimeInterval = 86_400
    /// The earliest date a server's record may carry (0001-01-01): earlier ones are clamped to it.
    static let earliestDate = Date(timeIntervalSince1970: -62_135_596_800)
    /// The mode bits a server may set: the permissions and the sticky bit. Set-user-ID and
    /// set-group-ID from another machine are dropped, as are bits that are no mode bits at all.
    static let modeMask: Int64 = 0o1777
    /// The fields the mount keeps times in, in nanoseconds since 1970.
    static let nanosecondFields = ["mtimeNanoseconds", "atimeNanoseconds", "ctimeNanoseconds"]

    /// `payload` with what no server may set taken out (mode bits outside ``modeMask``) and its
    /// dates clamped into ``earliestDate`` … `now` + ``futureSlack``; also what was changed, as
    /// the user is told it (empty when nothing was).
    static func clamped(_ payload: RecordPayload, now: Date) -> (payload: RecordPayload, changes: [String]) {
        var payload = payload
        var changes: [String] = []
        let latest = now.addingTimeInterval(futureSlack)
        func clamp(_ date: Date) -> Date { min(max(date, earliestDate), latest) }
        for (name, date) in [("modified", payload.modificationDate), ("created", payload.creationDate)] {
            guard let date, clamp(date) != date else { continue }
            changes.append("\(name) date \(date.timeIntervalSince1970) clamped")
            if name == "modified" { payload.modificationDate = clamp(date) } else { payload.creationDate = clamp(date) }
        }
        for (key, value) in payload.fields.sorted(by: { $0.key < $1.key }) {
            if key == FieldName.mode, let mode = value.int64Value, mode & ~modeMask != 0 {
                payload.fields[key] = .int64(mode & modeMask)
                changes.append("mode \(String(mode, radix: 8)) clamped to \(String(mode & modeMask, radix: 8))")
            } else if nanosecondFields.contains(key), let nanoseconds = value.int64Value {
                let bound = Int64(latest.timeIntervalSince1970) * 1_000_000_000
                if nanoseconds > bound {
                    payload.fields[key] = .int64(bound)
                    changes.append("\(key) \(nanoseconds) clamped")
                }
            } else if let date = value.dateValue, clamp(date) != date {
                payload.fields[key] = .date(clamp(date))
                changes.append("\(key) date \(date.timeIntervalSince1970) clamped")
            }
        }
        return (payload, changes)
    }
}
