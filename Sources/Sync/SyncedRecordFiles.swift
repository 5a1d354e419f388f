import Foundation
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
/// A file's name is its record name escaped: ASCII letters, digits, `-` and `_` as they are,
/// every other byte of the UTF-8 as `%XX`, then `.json` — so no name can hold a `/` or be `.`
/// or `..`, and two record names never share a file. A record name whose escape would be longer
/// than ``maximumEscapedLength`` bytes is named `%%` and the SHA-256 of its UTF-8 instead (an
/// escape never holds `%%`, so the two kinds cannot meet). The header holds the record name, so
/// the index never decodes a file name.
enum SyncedRecordFiles {
    /// The longest escaped record name used as a file name (NAME_MAX is 255 bytes on Linux).
    static let maximumEscapedLength = 200

    /// What a record file says of its record, besides the base.
    struct Header: Codable, Equatable {
        var recordName: String
        var recordType: String
        var serverSeq: Int64
        var localTag: String?
    }

    static func directory(forDatabase databasePath: String) -> String { databasePath + "/sync/records" }

    /// The file name of the record named `recordName`, inside its directory.
    static func fileName(of recordName: String) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        var escaped: [UInt8] = []
        for byte in recordName.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "_"):
                escaped.append(byte)
            default:
                escaped += [UInt8(ascii: "%"), digits[Int(byte >> 4)], digits[Int(byte & 0xF)]]
            }
            if escaped.count > maximumEscapedLength { return "%%" + SHA256.hexDigest(recordName.utf8) + ".json" }
        }
        return String(decoding: escaped, as: UTF8.self) + ".json"
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

    /// The header and base of the file of the record named `recordName` in `directory`.
    ///
    /// - Throws: ``SyncError/state(path:reason:)`` when it cannot be read or is damaged.
    static func read(_ recordName: String, in directory: String) throws(SyncError) -> (header: Header, base: String) {
        let path = path(of: recordName, in: directory)
        guard let data = FileManager.default.contents(atPath: path) else { throw .state(path: path, reason: "cannot be read") }
        let file = try decode(data, path: path)
        guard file.header.recordName == recordName else {
            throw .state(path: path, reason: "damaged: holds record \(file.header.recordName)")
        }
        return file
    }

    /// The headers of every record file in `directory` by record name (none when it does not
    /// exist). Temp files that an interrupted write left behind are skipped, and removed when
    /// `removingLeftovers` (only while holding `<db>/sync/lock`: no write can be under way then).
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
        headers.reserveCapacity(names.count)
        for name in names {
            let path = directory + "/" + name
            if name.contains(".tmp-") {
                if removingLeftovers { unlink(path) }
                continue
            }
            guard name.hasSuffix(".json") else { continue }
            guard let data = FileManager.default.contents(atPath: path) else { throw .state(path: path, reason: "cannot be read") }
            let header = try decode(data, path: path, decoder: decoder).header
            guard fileName(of: header.recordName) == name else {
                throw .state(path: path, reason: "damaged: holds record \(header.recordName)")
            }
            headers[header.recordName] = header
        }
        return headers
    }
}
