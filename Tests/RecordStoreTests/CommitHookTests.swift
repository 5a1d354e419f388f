import Foundation
import Synchronization
import TestSupport
import Testing

@testable import RecordStore

/// A hook that records what it saw and adds a `Copy` of every saved `Note`'s previous state.
private final class CopyingHook: CommitHook {
    let seen = Mutex<[(reason: String?, saves: [(String, String?, Bool)], deleted: [String])]>([])
    let failing: Bool
    let addName: String?

    init(failing: Bool = false, addName: String? = nil) {
        self.failing = failing
        self.addName = addName
    }

    func records(toAddTo commit: PendingCommit) throws(RecordStoreError) -> [Record] {
        seen.withLock {
            $0.append(
                (
                    commit.reason?.name,
                    commit.saves.map { ($0.record.recordID.recordName, $0.previous?.recordChangeTag, $0.takesIdentity) },
                    commit.deleted.map(\.recordID.recordName).sorted()
                ))
        }
        if failing { throw .invalidArguments("refused by the hook") }
        var added: [Record] = []
        for save in commit.saves where save.record.recordType == "Note" {
            guard let previous = save.previous else { continue }
            let whole = try commit.wholeRecord(previous)
            var copy = Record(recordType: "Copy", recordID: RecordID(recordName: addName ?? "copy-\(save.record.recordChangeTag!)"))
            copy["of"] = .string(previous.recordID.recordName)
            copy["text"] = whole["text"]
            added.append(copy)
        }
        return added
    }
}

@Suite struct CommitHookTests {
    @Test func addedRecordsAreCommittedInTheSameJournalLine() throws {
        let path = makeTemporaryDirectory("hook")
        let db = try makeDatabase(path)
        let hook = CopyingHook()
        db.setCommitHook(hook)
        let long = String(repeating: "old text ", count: 100)  // a large field: read from its file
        let saved = try db.modify(saving: [note("n", folder: nil, text: long)]).savedRecords[0]
        let before = db.currentToken
        var edited = saved
        edited["text"] = .string("new")
        let result = try db.modify(saving: [edited], reason: ModifyReason("edit"))
        // One commit: one seq, so one journal line, holds the save and the copy.
        let changes = try db.changes(since: before)
        #expect(changes.token.stringValue.hasSuffix(":\(Int(before.stringValue.split(separator: ":").last!)! + 1)"))
        #expect(Set(changes.changed.map(\.recordID.recordName)) == ["n", "copy-\(result.savedRecords[0].recordChangeTag!)"])
        #expect(result.savedRecords.count == 2)
        let copy = try db.record(for: RecordID(recordName: "copy-\(result.savedRecords[0].recordChangeTag!)"))
        #expect(copy["text"] == .string(long))
        #expect(copy.recordChangeTag == result.savedRecords[0].recordChangeTag)
        #expect(hook.seen.withLock { $0.last?.reason } == "edit")
        #expect(hook.seen.withLock { $0.last?.saves.first?.1 } == saved.recordChangeTag)
        // A reopened database (journal replay) holds both.
        let reopened = try makeDatabase(path)
        #expect(reopened.metadata(ofType: "Copy").count == 1)
    }

    /// A hook may also return the next version of a stored record the commit does not touch (as
    /// note history makes a delta whole when its base is deleted): stored in the same commit when
    /// it carries the stored change tag, refused with the commit otherwise.
    @Test func aHookMayRewriteAStoredRecord() throws {
        struct Rewriting: CommitHook {
            let stale: Bool
            func records(toAddTo commit: PendingCommit) throws(RecordStoreError) -> [Record] {
                guard let other = commit.metadata(named: "other") else { return [] }
                var record = try commit.wholeRecord(other)
                record["text"] = .string("rewritten")
                if stale { record.recordChangeTag = "stale" }
                return [record]
            }
        }
        let db = try makeDatabase()
        try db.modify(saving: [note("n", folder: nil, text: "a"), note("other", folder: nil, text: "before")])
        db.setCommitHook(Rewriting(stale: true))
        #expect(throws: RecordStoreError.self) { try db.modify(deleting: [RecordID(recordName: "n")]) }
        #expect(try db.record(for: RecordID(recordName: "n"))["text"] == .string("a"))
        db.setCommitHook(Rewriting(stale: false))
        let result = try db.modify(deleting: [RecordID(recordName: "n")])
        #expect(result.savedRecords.map(\.recordID.recordName) == ["other"])
        #expect(try db.record(for: RecordID(recordName: "other"))["text"] == .string("rewritten"))
    }

    @Test func aFailingHookOrABadAdditionCommitsNothing() throws {
        let db = try makeDatabase()
        let saved = try db.modify(saving: [note("n", folder: nil, text: "a")]).savedRecords[0]
        db.setCommitHook(CopyingHook(failing: true))
        var edited = saved
        edited["text"] = .string("b")
        #expect(throws: RecordStoreError.self) { try db.modify(saving: [edited]) }
        #expect(try db.record(for: saved.recordID)["text"] == .string("a"))
        // A replacement of a record this commit saves by one of another type is refused, and the save with it.
        db.setCommitHook(CopyingHook(addName: "n"))
        #expect(throws: RecordStoreError.invalidArguments("record n replaced by the commit hook: another type, partial or with references"))
        {
            try db.modify(saving: [edited])
        }
        #expect(try db.record(for: saved.recordID)["text"] == .string("a"))
        db.setCommitHook(nil)
        try db.modify(saving: [edited])
        #expect(db.metadata(ofType: "Copy").isEmpty)
    }

    @Test func theHookSeesCascadesAndTakenIdentities() throws {
        let db = try makeDatabase()
        try db.modify(saving: [folder("f"), note("a", folder: "f"), note("b", folder: nil), note("c", folder: nil)])
        let hook = CopyingHook()
        db.setCommitHook(hook)
        try db.modify(deleting: [RecordID(recordName: "f")])
        #expect(hook.seen.withLock { $0.last?.deleted } == ["a", "f"])
        // A rename over: b takes c's identity as c is deleted.
        var b = try db.record(for: RecordID(recordName: "b"))
        let c = try #require(db.metadata(for: RecordID(recordName: "c")))
        b.takeIdentity(c.identity)
        b["text"] = .string("from c")
        try db.modify(saving: [b], deleting: [c.recordID])
        #expect(hook.seen.withLock { $0.last?.saves.first?.2 } == true)
        #expect(hook.seen.withLock { $0.last?.deleted } == ["c"])
    }

    @Test func aFieldIndexFollowsEveryChangeAndReload() throws {
        let path = makeTemporaryDirectory("fieldindex")
        let a = try makeDatabase(path)
        func tagged(_ name: String, _ value: String) -> Record {
            var r = Record(recordType: "Tagged", recordID: RecordID(recordName: name))
            r["of"] = .string(value)
            return r
        }
        try a.modify(saving: [tagged("t1", "x"), tagged("t2", "y")])
        a.indexField("of", ofType: "Tagged")
        #expect(a.metadata(ofType: "Tagged", whereField: "of", equals: "x").map(\.recordID.recordName) == ["t1"])
        // Another process's commits: a save, a change of value, a delete.
        let b = try makeDatabase(path)
        try b.modify(saving: [tagged("t3", "x")])
        var t2 = try b.record(for: RecordID(recordName: "t2"))
        t2["of"] = .string("x")
        try b.modify(saving: [t2], deleting: [RecordID(recordName: "t1")])
        #expect(Set(a.metadata(ofType: "Tagged", whereField: "of", equals: "x").map(\.recordID.recordName)) == ["t2", "t3"])
        #expect(a.metadata(ofType: "Tagged", whereField: "of", equals: "y").isEmpty)
        // Behind by more than one checkpoint: a reloads its whole index and keeps the table.
        try b.modify(saving: [tagged("t4", "x")])
        try b.checkpoint()
        try b.modify(saving: [tagged("t5", "y")])
        try b.checkpoint()
        #expect(Set(a.metadata(ofType: "Tagged", whereField: "of", equals: "x").map(\.recordID.recordName)) == ["t2", "t3", "t4"])
        #expect(a.metadata(ofType: "Tagged", whereField: "of", equals: "y").map(\.recordID.recordName) == ["t5"])
        #expect(a.state.withLock { $0.index.fieldIndexes.count } == 1)
    }
}
