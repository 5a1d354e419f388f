import Foundation
import TestSupport
import Testing

@testable import RecordStore

@Suite struct ConflictTests {
    @Test func staleChangeTagFailsWithTheServerRecord() throws {
        let path = makeTemporaryDirectory()
        let first = try makeDatabase(path)
        let second = try makeDatabase(path)
        try first.modify(saving: [note("n", folder: nil, text: "v1")])
        try second.refresh()
        var mine = try second.record(for: RecordID(recordName: "n"))
        var theirs = try first.record(for: RecordID(recordName: "n"))
        theirs["text"] = "theirs"
        let serverTag = try first.modify(saving: [theirs]).savedRecords[0].recordChangeTag
        mine["text"] = "mine"
        do {
            try second.modify(saving: [mine])
            Issue.record("stale save succeeded")
        } catch RecordStoreError.serverRecordChanged(let server, let client) {
            #expect(server["text"] == "theirs")
            #expect(server.recordChangeTag == serverTag)
            #expect(client["text"] == "mine")
        }
        #expect(try first.record(for: RecordID(recordName: "n"))["text"] == "theirs")
    }

    @Test func changedKeysMergesAndAllKeysOverwrites() throws {
        let path = makeTemporaryDirectory()
        let first = try makeDatabase(path)
        let second = try makeDatabase(path)
        var r = note("n", folder: nil, text: "body")
        r["color"] = "red"
        try first.modify(saving: [r])
        var stale = try first.record(for: r.recordID)
        var fresh = stale
        fresh["color"] = "blue"
        try second.modify(saving: [fresh])
        // changedKeys: only title is written; the other process's color stays.
        stale["title"] = "renamed"
        let merged = try first.modify(saving: [stale], savePolicy: .changedKeys).savedRecords[0]
        #expect(merged["title"] == "renamed")
        #expect(merged["color"] == "blue")
        #expect(merged["text"] == "body")
        // allKeys: the client's fields replace the server's whatever the tag.
        var old = try second.record(for: r.recordID)
        old["color"] = nil
        _ = try first.modify(saving: [try first.record(for: r.recordID)])
        let replaced = try second.modify(saving: [old], savePolicy: .allKeys).savedRecords[0]
        #expect(replaced["color"] == nil)
        #expect(try first.record(for: r.recordID)["color"] == nil)
    }

    @Test func aConflictIsCaughtAcrossProcesses() throws {
        let path = makeTemporaryDirectory()
        let db = try makeDatabase(path)
        try db.modify(saving: [Record(recordType: "Counter", recordID: RecordID(recordName: "c"))])
        let stale = try db.record(for: RecordID(recordName: "c"))
        let (child, pipe) = try launch("recordstore-stress", ["counter", path, "c", "1"])
        child.waitUntilExit()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(child.terminationStatus == 0, "\(output)")
        var mine = stale
        mine["n"] = .int64(100)
        #expect {
            try db.modify(saving: [mine])
        } throws: { error in
            guard case RecordStoreError.serverRecordChanged(let server, _) = error else { return false }
            return server["n"] == .int64(1)
        }
    }
}
