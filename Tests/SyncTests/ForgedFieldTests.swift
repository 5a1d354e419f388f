import Foundation
import Notes
import Postgres
import RecordStore
import TestSupport
import Testing

@testable import Sync

/// Fields forged on the server that the store could hold but that lie (a size that is not the
/// bytes', a link to what no link may name) or that no server may set (setuid bits, dates far
/// ahead): the row is set aside, or applied with the value clamped and the user told.
@Suite(.tags(.postgres), .needsPostgres) struct ForgedFieldTests {
    /// Writes a new version of the server row `name` whose payload is `transform` of the current one.
    static func reforge(_ server: String, name: String, _ transform: (String) -> String) throws {
        let connection = try Connection(server)
        let payload = try #require(
            try connection.execute("SELECT payload::text AS p FROM notesfs_records WHERE record_name = $1", [name]).value(0, "p"))
        let forged = transform(payload)
        #expect(forged != payload, "the forgery changed nothing: \(payload)")
        try connection.execute(
            "UPDATE notesfs_records SET payload = $2::jsonb, seq = nextval('notesfs_seq'), origin = 'forger/' || nextval('notesfs_seq') WHERE record_name = $1",
            [name, forged])
    }

    static func forge(_ server: String, name: String, type: String, fields: String, dates: String = "") throws {
        try ForgedNumberTests.forge(Connection(server), name: name, type: type, payload: #"{\#(dates)"fields":{\#(fields)}}"#)
    }

    @Test(arguments: [String(Int64.max), "100000", "0"]) func aForgedSizeOfAnAssetAlreadyHeldIsSetAside(size: String) throws {
        let (server, machines) = try makeMachines(2)
        let (a, b) = (machines[0], machines[1])
        try a.save([
            Attachment(name: "five.bin", content: try a.database.makeAsset(Data("hello".utf8)), recordID: RecordID(recordName: "att"))
                .record
        ])
        try a.sync()
        try b.sync()
        try Self.reforge(server, name: "att") { $0.replacingOccurrences(of: #""size": "5""#, with: #""size": "\#(size)""#) }
        let report = try b.sync()
        #expect(report.setAside.map(\.recordName) == ["att"], "\(report.setAside)")
        let attachment = try Attachment(record: b.database.record(for: RecordID(recordName: "att")))
        #expect(attachment.content?.size == 5)
        let fsck = try notesfs(b.path, ["fsck"])
        #expect(fsck.status == 0, "\(fsck.out)\(fsck.stderr)")
    }

    /// What a forged size did before it was set aside (or any other way a record's asset size
    /// goes wrong): fsck reports it.
    @Test func fsckReportsAnAssetWhoseSizeIsNotItsFiles() throws {
        let (_, machines) = try makeMachines(1)
        let b = machines[0]
        let real = try b.database.makeAsset(Data("hello".utf8))
        try b.save([
            Attachment(name: "five.bin", content: Asset(sha256: real.sha256, size: 100_000), recordID: RecordID(recordName: "att")).record
        ])
        let fsck = try notesfs(b.path, ["fsck"])
        #expect(fsck.status == 4, "\(fsck.out)\(fsck.stderr)")
        #expect((fsck.out + fsck.stderr).contains("100000 bytes, its file 5"), "\(fsck.out)\(fsck.stderr)")
    }

    @Test func aVersionWhoseSizeIsNotItsBytesIsSetAside() throws {
        let (server, machines) = try makeMachines(1)
        let b = machines[0]
        let common =
            #""note":{"type":"string","value":"n"},"noteType":{"type":"string","value":"Note"},"title":{"type":"string","value":"T"},"kind":{"type":"string","value":"edit"},"date":{"type":"date","value":"1700000000"}"#
        try Self.forge(
            server, name: "n", type: "Note", fields: #""title":{"type":"string","value":"T"},"text":{"type":"string","value":"now"}"#)
        try Self.forge(
            server, name: "v-huge", type: "Version",
            fields: common + #","text":{"type":"string","value":"x"},"size":{"type":"int64","value":"9223372036854775807"}"#)
        try Self.forge(
            server, name: "v-short", type: "Version",
            fields: common + #","text":{"type":"string","value":"xyz"},"size":{"type":"int64","value":"1"}"#)
        try Self.forge(
            server, name: "v-delta", type: "Version",
            fields: common
                + #","deltaBase":{"type":"string","value":"v-good"},"deltaPrefix":{"type":"int64","value":"1"},"deltaSuffix":{"type":"int64","value":"0"},"deltaText":{"type":"string","value":"b"},"size":{"type":"int64","value":"99"}"#
        )
        try Self.forge(
            server, name: "v-good", type: "Version",
            fields: common + #","text":{"type":"string","value":"ab"},"size":{"type":"int64","value":"2"}"#)
        let report = try b.sync()
        #expect(Set(report.setAside.map(\.recordName)) == ["v-huge", "v-short", "v-delta"], "\(report.setAside)")
        #expect(versionNames(b) == ["v-good"])
    }

    @Test func forgedModesOwnersAndFutureDatesAreClampedAndTold() throws {
        let (server, machines) = try makeMachines(1)
        let b = machines[0]
        func ownership(_ mode: String) -> String {
            #","mode":{"type":"int64","value":"\#(mode)"},"uid":{"type":"int64","value":"4294967291"},"gid":{"type":"int64","value":"0"}"#
        }
        try Self.forge(
            server, name: "all-bits", type: "Note",
            fields: #""title":{"type":"string","value":"A"},"text":{"type":"string","value":"a"}"# + ownership("-1"))
        try Self.forge(
            server, name: "setuid", type: "Note",
            fields: #""title":{"type":"string","value":"S"},"text":{"type":"string","value":"s"}"# + ownership("3565"))  // 06755
        try Self.forge(
            server, name: "future", type: "Note", fields: #""title":{"type":"string","value":"F"},"text":{"type":"string","value":"f"}"#,
            dates: #""modified":"1e300","created":"1e300","#)
        try Self.forge(
            server, name: "plain", type: "Note",
            fields: #""title":{"type":"string","value":"P"},"text":{"type":"string","value":"p"}"# + ownership("420"),
            dates: #""modified":"1700000000","#)
        let report = try b.sync()
        #expect(report.setAside.isEmpty, "\(report.setAside)")
        func record(_ name: String) throws -> Record { try b.database.record(for: RecordID(recordName: name)) }
        #expect(try record("all-bits")["mode"]?.int64Value == 0o1777)
        #expect(try record("setuid")["mode"]?.int64Value == 0o755)
        #expect(try record("plain")["mode"]?.int64Value == 0o644)
        #expect(try record("plain").modificationDate == Date(timeIntervalSince1970: 1_700_000_000))
        let bound = Date().addingTimeInterval(86_400 + 60)
        let future = try record("future")
        #expect(future.modificationDate.map { $0 <= bound } == true, "\(future.modificationDate as Any)")
        #expect(future.creationDate.map { $0 <= bound } == true, "\(future.creationDate as Any)")
        #expect(report.notices.contains { $0.contains("future") && $0.contains("clamped") }, "\(report.notices)")
        let status = try notesfs(b.path, ["sync", "status"])
        #expect(status.out.contains("clamped"), "\(status.out)")
    }

    @Test func forgedLinksAreSetAside() throws {
        let (server, machines) = try makeMachines(1)
        let b = machines[0]
        try Self.forge(server, name: "folder", type: "Folder", fields: #""name":{"type":"string","value":"Dir"}"#)
        try Self.forge(
            server, name: "target", type: "Note", fields: #""title":{"type":"string","value":"T"},"text":{"type":"string","value":"t"}"#)
        func link(_ name: String, to target: String) throws {
            try Self.forge(
                server, name: name, type: "Link",
                fields:
                    #""name":{"type":"string","value":"\#(name)"},"target":{"type":"reference","value":{"recordName":"\#(target)","action":"deleteSelf"}}"#
            )
        }
        try link("self-link", to: "self-link")
        try link("folder-link", to: "folder")
        try link("good-link", to: "target")
        try link("link-link", to: "good-link")
        let report = try b.sync()
        #expect(Set(report.setAside.map(\.recordName)) == ["self-link", "folder-link", "link-link"], "\(report.setAside)")
        #expect(b.has("good-link"))
        let fsck = try notesfs(b.path, ["fsck"])
        #expect(fsck.status == 0, "\(fsck.out)\(fsck.stderr)")
    }
}
