import Foundation
import POSIX
import RecordStore

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// The on-disk layout of the synced records: one file a record in `<db>/sync/records/`, holding
/// a header line and the base:
///
/// ```
/// {"localTag":"…","recordName":"…","recordType":"Note","serverSeq":12}
/// {"fields":{…},"modified":"…"}
/// ```
///
/// The base (the rest of the file after the first newline, exactly as ``RecordPayload/jsonText``
/// made it) is read only when a merge needs it; an index needs only the header.
///
/// A file's name is its record name as ``POSIX/SafeFileName`` encodes it (as the record store
/// names its record files), then `.json`, so no name can hold a `/` or be `.` or `..`. The
/// header holds the record name, which is the truth: a file whose header names another record
/// is damaged.
///
/// Earlier versions escaped names their own way (``legacyFileName(of:)``): a file of that name
/// is still found, and replaced by the current name when its record is next saved.
enum SyncedRecordFiles {
    /// What a record file says of its record, besides the base.
    struct Header: Codable, Equatable {
        var recordName: String
        var recordType: String
        var serverSeq: Int64
        var localTag: String?
    }

    static func directory(forDatabase databasePath: String) -> String { databasePath + "/sync/records" }

    /// The file name of the record named `recordName`, inside its directory.
    static func fileName(of recordName: String) -> String { SafeFileName.fileName(for: recordName) + ".json" }

    /// The name earlier versions gave the file of `recordName`: ASCII letters, digits, `-` and
    /// `_` as they are, every other byte of the UTF-8 as `%XX` (uppercase hex), then `.json`; a
    /// name whose escape was longer than 200 bytes as `%%` and the SHA-256 of its UTF-8. Nil
    /// when it is the current name (a name of letters, digits, `-` and `_` only, the usual case).
    static func legacyFileName(of recordName: String) -> String? {
        var escaped = ""
        for byte in recordName.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "_"):
                escaped.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                escaped += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
            if escaped.utf8.count > 200 { return "%%" + SHA256.hexDigest(recordName.utf8) + ".json" }
        }
        let legacy = escaped + ".json"
        return legacy == fileName(of: recordName) ? nil : legacy
    }

    static func path(of recordName: String, in directory: String) -> String { directory + "/" + fileName(of: recordName) }

    /// The content of the file of `record`, named `recordName`, whose base is `base`.
    static func encode(_ recordName: String, _ record: SyncedRecord, base: String) throws(SyncError) -> Data {
        let header = Header(recordName: recordName, recordType: record.recordType, serverSeq: record.serverSeq, localTag: record.localTag)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        do { return try encoder.encode(header) + Data("\n".utf8) + Data(base.utf8) } catch {
            throw .state(path: recordName, reason: "cannot encode: \(error)")
        }
    }

    /// The header and base of the file `data`, read from `path`.
    ///
    /// - Throws: ``SyncError/state(path:reason:)`` when it is not a record file.
    static func decode(_ data: Data, path: String, decoder: JSONDecoder = JSONDecoder()) throws(SyncError) -> (header: Header, base: String)
    {
        guard let newline = data.firstIndex(of: UInt8(ascii: "\n")) else { throw .state(path: path, reason: "damaged: no header line") }
        let header: Header
        do { header = try decoder.decode(Header.self, from: data[data.startIndex..<newline]) } catch {
            throw .state(path: path, reason: "damaged: \(error)")
        }
        return (header, String(decoding: data[(newline + 1)...], as: UTF8.self))
    }

    /// The header and base of the file of the record named `recordName` in `directory` (under
    /// its current name, else under its ``legacyFileName(of:)``).
    ///
    /// - Throws: ``SyncError/state(path:reason:)`` when it cannot be read or is damaged.
    static func read(_ recordName: String, in directory: String) throws(SyncError) -> (header: Header, base: String) {
        var path = path(of: recordName, in: directory)
        var data = FileManager.default.contents(atPath: path)
        if data == nil, let legacy = legacyFileName(of: recordName) {
            let old = directory + "/" + legacy
            if let bytes = FileManager.default.contents(atPath: old) { (path, data) = (old, bytes) }
        }
        guard let data else { throw .state(path: path, reason: "cannot be read") }
        let file = try decode(data, path: path)
        guard file.header.recordName == recordName else {
            throw .state(path: path, reason: "damaged: holds record \(file.header.recordName)")
        }
        return file
    }

    /// The headers of every record file in `directory` by record name (none when it does not
    /// exist). Temp files that an interrupted write left behind are skipped, and removed when
    /// `removingLeftovers` (only while holding `<db>/sync/lock`: no write can be under way then).
    /// A file under its record's legacy name counts unless one under the current name is there.
    ///
    /// - Throws: ``SyncError/state(path:reason:)`` for an unreadable directory or file, a damaged
    ///   file, or a file whose name is not its record's.
    static func headers(in directory: String, removingLeftovers: Bool) throws(SyncError) -> [String: Header] {
        let names: [String]
        do { names = try FileManager.default.contentsOfDirectory(atPath: directory) } catch {
            if !FileManager.default.fileExists(atPath: directory) { return [:] }
            throw .state(path: directory, reason: "cannot be listed: \(error)")
        }
        let decoder = JSONDecoder()
        var headers: [String: Header] = [:]
        var legacy: [String: Header] = [:]
        headers.reserveCapacity(names.count)
        for name in names {
            let path = directory + "/" + name
            if name.contains(".tmp-") {
                if removingLeftovers { unlink(path) }
                continue
            }
            guard name.hasSuffix(".json") else { continue }
            guard let data = FileManager.default.contents(atPath: path) else {
                if !FileManager.default.fileExists(atPath: path) { continue }  // removed since the listing (`sync status` reads unlocked)
                throw .state(path: path, reason: "cannot be read")
            }
            let header = try decode(data, path: path, decoder: decoder).header
            if fileName(of: header.recordName) == name {
                headers[header.recordName] = header
            } else if legacyFileName(of: header.recordName) == name {
                legacy[header.recordName] = header
            } else {
                throw .state(path: path, reason: "damaged: holds record \(header.recordName)")
            }
        }
        return headers.merging(legacy) { current, _ in current }
    }
}

extension String {
    /// The string with `0`s before it up to `count` characters.
    fileprivate func leftPadded(to count: Int) -> String { String(repeating: "0", count: max(0, count - self.count)) + self }
}
