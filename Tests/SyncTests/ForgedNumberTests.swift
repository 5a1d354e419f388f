import Foundation
import Notes
import Postgres
import RecordStore
import TestSupport
import Testing

@testable import Sync

/// Numbers forged on the server (sizes, offsets, modes, owners, nanoseconds, dates) at the edges
/// of their types: no client traps on them (each sync runs the built binary, so that a trap is a
/// signal, not the end of the tests), each row is set aside or clamped, and fsck stays clean.
@Suite(.tags(.postgres), .needsPostgres) struct ForgedNumberTests {
    static let edges = [
        "0", "-1", String(Int64.min), String(Int64.max), "9223372036854775808", "1e300", "-1e300", "1.7976931348623157e308",
    ]

    /// Inserts a live row as a hostile writer would.
    static func forge(_ connection: Connection, name: String, type: String, payload: String) throws {
        try connection.execute(
            "INSERT INTO notesfs_records VALUES ($1, $2, nextval('notesfs_seq'), false, $3::jsonb, 'forger/1')", [name, type, payload])
    }

    /// A sync of `machine` by the built binary: it must end (not die of a signal) with status 0.
    static func expectSyncSurvives(_ machine: Machine, sourceLocation: SourceLocation = #_sourceLocation) throws -> ProgramResult {
        let run = try notesfs(machine.path, ["sync"])
        #expect(run.status == 0, "sync ended with \(run.status): \(run.stderr)", sourceLocation: sourceLocation)
        let fsck = try notesfs(machine.path, ["fsck"])
        #expect(fsck.status == 0, "\(fsck.out)\(fsck.stderr)", sourceLocation: sourceLocation)
        return run
    }

    @Test func anAssetRowOfSizeInt64MaxDoesNotTrap() throws {
        let (server, machines) = try makeMachines(1)
        let b = machines[0]
        let connection = try Connection(server)
        let hash = String(repeating: "ab", count: 32)
        try connection.execute("INSERT INTO notesfs_assets (sha256, size) VALUES ($1, $2)", [hash, String(Int64.max)])
        try Self.forge(
            connection, name: "huge", type: "Attachment",
            payload:
                #"{"fields":{"name":{"type":"string","value":"huge.bin"},"content":{"type":"asset","value":{"sha256":"\#(hash)","size":"\#(Int64.max)"}}}}"#
        )
        try Self.forge(
            connection, name: "fine", type: "Note",
            payload: #"{"fields":{"title":{"type":"string","value":"Fine"},"text":{"type":"string","value":"ok"}}}"#)
        let run = try Self.expectSyncSurvives(b)
        #expect(run.stderr.contains("server record set aside: huge"), "\(run.stderr)")
        try b.database.refresh()
        #expect(!b.has("huge"))
        #expect(try b.note("fine").text == "ok")
    }

    /// Every numeric field the notes layer or the mount reads, of every record type, with every
    /// edge value: each row is set aside or applied clamped; no sync dies.
    @Test func everyNumericFieldAtEveryEdge() throws {
        let (server, machines) = try makeMachines(1)
        let b = machines[0]
        let connection = try Connection(server)
        let hash = String(repeating: "cd", count: 32)
        try connection.execute("INSERT INTO notesfs_assets (sha256, size) VALUES ($1, 3)", [hash])
        try connection.execute("INSERT INTO notesfs_asset_chunks (sha256, chunk, data) VALUES ($1, 0, '\\x616263')", [hash])
        let base: [String: String] = [
            "Note": #""title":{"type":"string","value":"T"},"text":{"type":"string","value":"x"}"#,
            "Folder": #""name":{"type":"string","value":"F"}"#,
            "Attachment": #""name":{"type":"string","value":"a.bin"},"content":{"type":"asset","value":{"sha256":"\#(hash)","size":"3"}}"#,
            "Symlink": #""name":{"type":"string","value":"l"},"target":{"type":"string","value":"/tmp"}"#,
            "Version":
                #""note":{"type":"string","value":"n"},"noteType":{"type":"string","value":"Note"},"title":{"type":"string","value":"T"},"kind":{"type":"string","value":"edit"},"date":{"type":"date","value":"1700000000"},"text":{"type":"string","value":"x"},"size":{"type":"int64","value":"1"}"#,
        ]
        let ints = ["mode", "uid", "gid", "mtimeNanoseconds", "atimeNanoseconds", "ctimeNanoseconds", "size", "deltaPrefix", "deltaSuffix"]
        var count = 0
        for (type, fields) in base.sorted(by: { $0.key < $1.key }) {
            for edge in Self.edges {
                let integer = Int64(edge) != nil
                for key in ints where integer {
                    count += 1
                    try Self.forge(
                        connection, name: "\(type)-\(key)-\(count)", type: type,
                        payload: #"{"fields":{\#(fields),"\#(key)":{"type":"int64","value":"\#(edge)"}}}"#)
                }
                count += 1
                try Self.forge(
                    connection, name: "\(type)-dates-\(count)", type: type,
                    payload:
                        #"{"modified":"\#(edge)","created":"\#(edge)","fields":{\#(fields),"date":{"type":"date","value":"\#(edge)"}}}"#)
                count += 1
                try Self.forge(
                    connection, name: "\(type)-double-\(count)", type: type,
                    payload: #"{"fields":{\#(fields),"mode":{"type":"double","value":"\#(edge)"}}}"#)
                if type == "Attachment" {
                    count += 1
                    try Self.forge(
                        connection, name: "asset-\(count)", type: type,
                        payload:
                            #"{"fields":{"name":{"type":"string","value":"b\#(count)"},"content":{"type":"asset","value":{"sha256":"\#(hash)","size":"\#(edge)"}}}}"#
                    )
                }
            }
        }
        _ = try Self.expectSyncSurvives(b)
        // What was applied reads back through an export (every size, mode and date).
        let export = try notesfs(b.path, ["export", b.path + "-export"])
        #expect(export.status == 0, "\(export.stderr)")
        try b.database.refresh()
        for metadata in b.database.metadata(ofType: Attachment.recordType) {
            let record = try b.database.record(for: metadata.recordID)
            #expect(record["content"]?.assetValue?.size == 3, "\(metadata.recordID.recordName)")
        }
        for metadata in b.database.metadata(ofType: Version.recordType) {
            let record = try b.database.record(for: metadata.recordID)
            #expect(record["size"]?.int64Value == 1, "\(metadata.recordID.recordName)")
        }
        for type in ["Note", "Folder", "Attachment", "Symlink"] {
            for metadata in b.database.metadata(ofType: type) {
                let record = try b.database.record(for: metadata.recordID)
                if let mode = record["mode"]?.int64Value {
                    #expect(mode >= 0 && mode & ~0o1777 == 0, "\(metadata.recordID.recordName): \(mode)")
                }
                let limit = Date().addingTimeInterval(2 * 86_400)
                #expect((record.modificationDate ?? .distantPast) < limit, "\(metadata.recordID.recordName)")
            }
        }
        // A second sync has nothing new to trip on.
        _ = try Self.expectSyncSurvives(b)
    }
}
