import Foundation
import TestSupport
import Testing

@testable import RecordStore

/// `records(for:recentSaves: true)`, the text indexer's read: a record this process saved lately
/// is made from what its commit saved (`RecentLargeFields`), never from an older or another
/// version, and every other read still goes to the file.
@Suite struct RecentSavesTests {
    let text = String(repeating: "a line of the note's text\n", count: 200)
    let id = RecordID(recordName: "n")

    func damageFile(_ path: String, _ name: String) throws {
        try Data("not json".utf8).write(to: URL(fileURLWithPath: path + "/" + RecordFileName.relativePath(for: name)))
    }

    func recentRead(_ db: RecordDatabase, _ id: RecordID) throws -> Record {
        try #require(db.records(for: [id], recentSaves: true)[id]).get()
    }

    @Test func aRecordJustSavedIsMadeFromItsCommitNotItsFile() throws {
        let path = makeTemporaryDirectory("recent")
        let db = try makeDatabase(path)
        let saved = try #require(try db.modify(saving: [note("n", folder: nil, text: text)]).savedRecords.first)
        try damageFile(path, "n")
        // Not read from the file: the damage does not show, and the record is the saved one.
        let read = try recentRead(db, id)
        #expect(read["text"] == .string(text))
        #expect(read["title"] == "n")
        #expect(read.recordChangeTag == saved.recordChangeTag)
        #expect(!read.isPartial)
        // Every other read goes to the file and reports it.
        #expect(throws: RecordStoreError.self) { try db.record(for: id) }
        try db.close()
    }

    @Test func aVersionSavedSinceIsNeverAnsweredWithAnOlderOne() throws {
        let path = makeTemporaryDirectory("recent-versions")
        let db = try makeDatabase(path)
        let other = try makeDatabase(path)
        try db.modify(saving: [note("n", folder: nil, text: text)])
        #expect(try recentRead(db, id)["text"] == .string(text))

        // Another process's save: this one has no copy of it, and reads its file.
        var changed = try other.record(for: id)
        changed["text"] = .string(text + "another process\n")
        try other.modify(saving: [changed])
        try db.refresh()
        #expect(try recentRead(db, id)["text"] == .string(text + "another process\n"))

        // A rename through the index's partial record saves no text: the file holds it, whole.
        var partial = try #require(db.metadata(for: id)).record
        partial["title"] = .string("renamed")
        let renamed = try #require(try db.modify(saving: [partial]).savedRecords.first)
        let read = try recentRead(db, id)
        #expect(read["title"] == "renamed")
        #expect(read["text"] == .string(text + "another process\n"))
        #expect(read.recordChangeTag == renamed.recordChangeTag)

        // Deleted, then made again under the same name: the new record, not the old.
        try db.modify(deleting: [id])
        #expect(db.records(for: [id], recentSaves: true)[id].map { (try? $0.get()) == nil } == true)
        try db.modify(saving: [note("n", folder: nil, text: "new " + text)])
        #expect(try recentRead(db, id)["text"] == .string("new " + text))
        try other.close()
        try db.close()
    }

    @Test func pastItsLimitTheOldestAreReadFromTheirFiles() throws {
        let path = makeTemporaryDirectory("recent-limit")
        let db = try makeDatabase(path)
        // Each record's JSON is over a sixteenth of the limit: 32 of them overflow it.
        let big = String(repeating: "x", count: RecentLargeFields.limit / 16)
        for i in 0..<32 { try db.modify(saving: [note("n\(i)", folder: nil, text: "\(i) " + big)]) }
        try damageFile(path, "n0")
        try damageFile(path, "n31")
        #expect(throws: RecordStoreError.self) { try recentRead(db, RecordID(recordName: "n0")) }
        #expect(try recentRead(db, RecordID(recordName: "n31"))["text"] == .string("31 " + big))
        try db.close()
    }
}
