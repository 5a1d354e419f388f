import Foundation
import RecordStore
import TestSupport
import Testing

@testable import NotesCLI

@Suite struct HistoryCommandTests {
    /// The version IDs `note log` prints, newest first (the current state's is `current`).
    private func versionIDs(_ path: String, db: String) throws -> [String] {
        try notesfs(["note", "log", path], db: db).lines.map { String($0.split(separator: " ")[0]) }
    }

    @Test func logCatDiffRestoreAndUndelete() throws {
        let db = makeDatabasePath("history")
        try notesfs(["folder", "new", "Work"], db: db)
        try notesfs(["note", "new", "Work/Plan", "--text", "one\n"], db: db)
        try notesfs(["note", "new", "Work/Plan", "--text", "two\n", "--force"], db: db)  // keeps "one"
        try notesfs(["note", "new", "Work/Plan", "--text", "three\n", "--force"], db: db)  // within 10 minutes: coalesced
        // `note edit` always keeps the version it replaces.
        let edit = try notesfs(["note", "edit", "Work/Plan"], db: db, environment: ["VISUAL": "sed -i s/three/four/", "EDITOR": ""])
        #expect(edit.status == 0, "\(edit.stderr)")
        let log = try notesfs(["note", "log", "Work/Plan"], db: db)
        #expect(log.status == 0)
        #expect(log.lines.map { $0.split(separator: " ").dropFirst(3).joined(separator: " ") } == ["5 current", "6 edit", "4 edit"])
        let ids = try versionIDs("Work/Plan", db: db)
        #expect(try notesfs(["note", "cat", "Work/Plan", "--at", ids[2]], db: db).out == "one\n")
        #expect(try notesfs(["note", "cat", "Work/Plan", "--at", ids[1]], db: db).out == "three\n")
        #expect(try notesfs(["note", "cat", "Work/Plan", "--at", "2999-01-01"], db: db).out == "four\n")
        #expect(try notesfs(["note", "cat", "Work/Plan", "--at", "current"], db: db).out == "four\n")
        let json = try #require(try parseJSON(notesfs(["note", "log", "Work/Plan", "--json"], db: db).stdout) as? [[String: Any]])
        #expect(json.count == 3)
        #expect(json.allSatisfy { $0["version"] is String && ($0["date"] as? String)?.hasSuffix("Z") == true })
        #expect((json[2]["version"] as? String)?.hasPrefix(ids[2]) == true)

        // Bad versions and dates: clear errors and the exit statuses of ExitStatus.swift.
        let early = try notesfs(["note", "cat", "Work/Plan", "--at", "2000-01-01"], db: db)
        #expect(early.status == 1)
        #expect(early.stderr.hasPrefix("notesfs: Work/Plan.md: no version at or before 2000-01-01T00:00:00.000000Z"))
        #expect(try notesfs(["note", "cat", "Work/Plan", "--at", "ffffffff"], db: db).status == 1)
        let bad = try notesfs(["note", "cat", "Work/Plan", "--at", "yes"], db: db)
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("neither a date"))
        #expect(try notesfs(["note", "cat", "Work/Plan", "--at", "2026-13-01"], db: db).status == 2)
        #expect(try notesfs(["note", "restore", "Work/Plan"], db: db).status == 2)
        #expect(try notesfs(["log", "--since", "yesterday"], db: db).status == 2)

        // Diff: the previous version against the current text; and two chosen ones.
        let diff = try notesfs(["note", "diff", "Work/Plan"], db: db)
        #expect(diff.lines.dropFirst(2) == ["@@ -1 +1 @@", "-three", "+four"])
        #expect(diff.lines[0].hasPrefix("--- Work/Plan.md@\(ids[1])"))
        #expect(
            try notesfs(["note", "diff", "Work/Plan", ids[2], ids[1]], db: db).lines.dropFirst(2) == ["@@ -1 +1 @@", "-one", "+three"])
        #expect(try notesfs(["note", "diff", "Work/Plan", "current", "current"], db: db).out == "")

        // A restore is itself a version: it can be undone.
        #expect(try notesfs(["note", "restore", "Work/Plan", "--at", ids[2]], db: db).status == 0)
        #expect(try notesfs(["note", "cat", "Work/Plan"], db: db).out == "one\n")
        let afterRestore = try notesfs(["note", "log", "Work/Plan"], db: db).lines
        #expect(afterRestore.count == 4 && afterRestore[1].hasSuffix(" restore"))
        let restoreID = try versionIDs("Work/Plan", db: db)[1]
        #expect(try notesfs(["note", "restore", "Work/Plan", "--at", restoreID], db: db).status == 0)
        #expect(try notesfs(["note", "cat", "Work/Plan"], db: db).out == "four\n")

        // Deleted notes: listed, and brought back in their folder.
        #expect(try notesfs(["note", "rm", "Work/Plan"], db: db).status == 0)
        let deleted = try notesfs(["log", "--deleted"], db: db)
        #expect(deleted.lines.count == 1)
        #expect(deleted.lines[0].hasSuffix(" 5  delete  Work/Plan.md"))
        #expect(try notesfs(["log", "--deleted", "--since", "2999-01-01"], db: db).out == "")
        let undelete = try notesfs(["note", "undelete", "Work/Plan"], db: db)
        #expect(undelete.status == 0, "\(undelete.stderr)")
        #expect(try notesfs(["note", "cat", "Work/Plan"], db: db).out == "four\n")
        #expect(try notesfs(["log", "--deleted"], db: db).out == "")
        #expect(try notesfs(["note", "undelete", "Work/Plan"], db: db).status == 1)
        // With its folder gone, a deleted note comes back at its path, the folder made again.
        #expect(try notesfs(["folder", "rm", "Work"], db: db).status == 0)
        #expect(try notesfs(["note", "undelete", "Work/Plan"], db: db).status == 0)
        #expect(try notesfs(["note", "cat", "Work/Plan"], db: db).out == "four\n")
        #expect(try notesfs(["fsck"], db: db).status == 0)
    }

    /// Versions `history prune` keeps as deltas read back through `note cat --at`, `note diff` and
    /// `note restore` as before; a delta whose base is gone is reported by fsck (exit 4), moved to lost+found by `--repair`.
    @Test func versionsKeptAsDeltasReadBack() throws {
        let db = makeDatabasePath("history-delta")
        let header = String(repeating: "a paragraph every version shares\n", count: 30)
        var texts: [String] = []
        for day in 1...8 {
            texts.append(header + (1...day).map { "day \($0)\n" }.joined())
            let made = try notesfs(
                ["note", "new", "Plan", "--text", texts.last!, "--force"], db: db, environment: ["NOTESFS_HISTORY_INTERVAL": "0"])
            #expect(made.status == 0, "\(made.stderr)")
        }
        let prune = try notesfs(["history", "prune"], db: db, environment: ["NOTESFS_HISTORY_BUDGET": "100"])
        #expect(prune.status == 0, "\(prune.stderr)")
        do {
            let store = try RecordDatabase(path: db, backgroundThread: false)
            let versions = store.metadata(ofType: "Version")
            #expect(versions.count == 7)
            #expect(versions.filter { $0.field("deltaBase") != nil }.count == 6)
            try store.close()
        }
        let ids = try versionIDs("Plan", db: db).dropFirst()  // newest first, without `current`
        for (id, text) in zip(ids, texts.dropLast().reversed()) {
            #expect(try notesfs(["note", "cat", "Plan", "--at", id], db: db).out == text)
        }
        #expect(try notesfs(["note", "diff", "Plan", ids.last!], db: db).lines.dropFirst(2).filter { $0.hasPrefix("+") }.count == 7)
        #expect(try notesfs(["note", "restore", "Plan", "--at", ids.last!], db: db).status == 0)
        #expect(try notesfs(["note", "cat", "Plan"], db: db).out == texts[0])
        #expect(try notesfs(["fsck"], db: db).status == 0)
        // A delta whose base is gone (deleted behind the notes layer's back): reported, kept.
        do {
            let store = try RecordDatabase(path: db, backgroundThread: false)
            let bases = store.metadata(ofType: "Version").compactMap { $0.field("deltaBase")?.stringValue }
            let base = try #require(bases.first)
            try store.modify(deleting: [RecordID(recordName: base)])
            try store.close()
        }
        let fsck = try notesfs(["fsck"], db: db)
        #expect(fsck.status == 4)
        #expect(fsck.lines.contains { $0.contains("damaged: its base") && $0.contains("cannot be read") }, "\(fsck.out)")
        #expect(try notesfs(["fsck", "--repair"], db: db).status == 0)
    }

    @Test func fsckReportsADamagedVersionAndRepairMovesItAside() throws {
        let db = makeDatabasePath("history-fsck")
        try notesfs(["note", "new", "N", "--text", "a"], db: db)
        try notesfs(["note", "rm", "N"], db: db)  // a version of a deleted note: not a problem
        #expect(try notesfs(["fsck"], db: db).status == 0)
        do {
            let store = try RecordDatabase(path: db, backgroundThread: false)
            var record = Record(recordType: "Version", recordID: RecordID(recordName: "bad-version"))
            record["note"] = .string("gone")
            record["noteType"] = .string("Note")
            record["title"] = .string("T")
            record["text"] = .string("four")
            record["date"] = .date(Date(timeIntervalSince1970: 0))
            record["kind"] = .string("edit")
            record["size"] = .int64(99)  // not the size of its text
            var noDate = Record(recordType: "Version", recordID: RecordID(recordName: "no-date"))
            noDate["note"] = .string("gone")
            try store.modify(saving: [record, noDate])
            try store.close()
        }
        let fsck = try notesfs(["fsck"], db: db)
        #expect(fsck.status == 4)
        #expect(fsck.lines.contains { $0.hasPrefix("version bad-version of record gone: damaged: size 99, but it holds 4 bytes;") })
        #expect(fsck.lines.contains { $0.hasPrefix("version no-date of record gone: damaged: ") })
        // --repair copies the damaged versions to lost+found and deletes them; the good one stays.
        #expect(try notesfs(["fsck", "--repair"], db: db).status == 0)
        let store = try RecordDatabase(path: db, backgroundThread: false)
        #expect(store.metadata(ofType: "Version").count == 1)
        #expect((FileManager.default.subpaths(atPath: db + "/lost+found") ?? []).filter { $0.hasSuffix(".json") }.count == 2)
    }

    /// Damaged versions: one clear message each (no repetition, an out-of-range offset called
    /// so), counts that agree, and `history rm` to get rid of them.
    @Test func aDamagedVersionHasOneClearMessageAndCanBeRemoved() throws {
        let db = makeDatabasePath("history-damaged")
        let environment = ["NOTESFS_HISTORY_INTERVAL": "0"]
        try notesfs(["note", "new", "N", "--text", "base text\n"], db: db, environment: environment)
        try notesfs(["note", "new", "N", "--text", "now\n", "--force"], db: db, environment: environment)
        do {
            let store = try RecordDatabase(path: db, backgroundThread: false)
            let whole = try #require(store.metadata(ofType: "Version").first)
            func delta(_ name: String, base: String, prefix: Int64) -> Record {
                var record = Record(recordType: "Version", recordID: RecordID(recordName: name))
                for key in ["note", "noteType", "title", "kind"] { record[key] = whole.field(key) }
                record["date"] = .date(Date(timeIntervalSince1970: 1_000_000))
                record["deltaBase"] = .string(base)
                record["deltaPrefix"] = .int64(prefix)
                record["deltaSuffix"] = .int64(0)
                record["deltaText"] = .string("x")
                return record
            }
            try store.modify(saving: [
                delta("no-base", base: "gone", prefix: 0), delta("bad-offset", base: whole.recordID.recordName, prefix: -5),
            ])
            try store.close()
        }
        let fsck = try notesfs(["fsck"], db: db)
        #expect(fsck.status == 4)
        let noBase = fsck.lines.filter { $0.contains("no-base") }
        let badOffset = fsck.lines.filter { $0.contains("bad-offset") }
        #expect(noBase.count == 1 && badOffset.count == 1, "\(fsck.out)")
        #expect(
            noBase.allSatisfy {
                $0.components(separatedBy: "version no-base").count == 2 && $0.components(separatedBy: "damaged").count == 2
            },
            "said once: \(noBase)")
        #expect(badOffset.allSatisfy { $0.contains("out of range") && !$0.contains("wrong type") }, "\(badOffset)")
        #expect((noBase + badOffset).allSatisfy { $0.contains("history rm") }, "says the way out: \(fsck.out)")
        // history rm: a way out, by ID (or a prefix); an unknown ID is not found.
        #expect(try notesfs(["history", "rm", "no-bas"], db: db).status == 0)
        #expect(try notesfs(["history", "rm", "nothing-here"], db: db).status == 1)
        // --repair: the other goes to lost+found (a copy), and the count after repair is the
        // count that remains.
        let repair = try notesfs(["fsck", "--repair"], db: db)
        let summary = repair.stderr + repair.out
        let after = summary.firstMatch(of: /(\d+) remaining after repair/).map { Int($0.1)! }
        let remain = summary.firstMatch(of: /(\d+) problems? remain/).map { Int($0.1)! } ?? 0
        #expect(after == remain && repair.status == 0, "\(summary)")
        let kept = try #require(FileManager.default.subpaths(atPath: db + "/lost+found")).filter { $0.hasSuffix("badoffset.json") }
        #expect(kept.count == 1)
        #expect(try String(contentsOfFile: db + "/lost+found/" + kept[0], encoding: .utf8).contains("\"deltaPrefix\""))
        #expect(try notesfs(["fsck"], db: db).status == 0)
        #expect(try notesfs(["note", "log", "N"], db: db).lines.count == 2)
    }

    /// `history prune --dry-run` says what retention keeps, in words.
    @Test func pruneSaysWhatIsKept() throws {
        let db = makeDatabasePath("history-words")
        try notesfs(["note", "new", "N", "--text", "a"], db: db)
        let run = try notesfs(["history", "prune", "--dry-run"], db: db)
        #expect(run.status == 0)
        let text = run.out + run.stderr
        #expect(text.contains("every version of the last 7 days"), "\(text)")
        #expect(text.contains("the last 10 versions of each note"), "\(text)")
        #expect(text.contains("64 MiB"), "\(text)")
    }

    @Test func everySaveKeepsAVersionWithNoInterval() throws {
        let db = makeDatabasePath("history-interval")
        let environment = ["NOTESFS_HISTORY_INTERVAL": "0"]
        try notesfs(["note", "new", "N", "--text", "a"], db: db, environment: environment)
        for text in ["b", "c", "d"] { try notesfs(["note", "new", "N", "--text", text, "--force"], db: db, environment: environment) }
        #expect(try notesfs(["note", "log", "N"], db: db).lines.count == 4)
    }

    /// A history setting that is not a number in range is reported once on stderr, and the
    /// default is used.
    @Test func invalidHistorySettingsAreReported() throws {
        let db = makeDatabasePath("history-settings")
        try notesfs(["note", "new", "N", "--text", "a"], db: db)
        let run = try notesfs(
            ["history", "prune", "--dry-run"], db: db, environment: ["NOTESFS_HISTORY_BUDGET": "lots", "NOTESFS_HISTORY_INTERVAL": "-5"])
        #expect(run.status == 0, "\(run.stderr)")
        let warnings = run.stderr.split(separator: "\n")
        #expect(warnings.filter { $0.contains("NOTESFS_HISTORY_BUDGET") && $0.contains("'lots'") }.count == 1, "\(run.stderr)")
        #expect(warnings.filter { $0.contains("NOTESFS_HISTORY_INTERVAL") && $0.contains("'-5'") }.count == 1, "\(run.stderr)")
        let valid = try notesfs(["history", "prune", "--dry-run"], db: db, environment: ["NOTESFS_HISTORY_BUDGET": "30"])
        #expect(!valid.stderr.contains("is not a"), "\(valid.stderr)")
    }

    @Test func unifiedDiffs() {
        #expect(LineDiff.unified("a\nb\nc\n", "a\nb\nc\n", oldLabel: "x", newLabel: "y") == "")
        #expect(
            LineDiff.unified("a\nb\nc\n", "a\nB\nc\n", oldLabel: "x", newLabel: "y") == "--- x\n+++ y\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n")
        #expect(LineDiff.unified("", "new\n", oldLabel: "x", newLabel: "y") == "--- x\n+++ y\n@@ -0,0 +1 @@\n+new\n")
        #expect(
            LineDiff.unified("end", "end\n", oldLabel: "x", newLabel: "y")
                == "--- x\n+++ y\n@@ -1 +1 @@\n-end\n\\ No newline at end of file\n+end\n")
        // Two changes far apart: two hunks with three lines of context each.
        let old = (1...20).map { "\($0)\n" }.joined()
        let new = old.replacingOccurrences(of: "2\n3\n", with: "2\nthree\n").replacingOccurrences(of: "18\n", with: "")
        #expect(
            LineDiff.unified(old, new, oldLabel: "x", newLabel: "y")
                == "--- x\n+++ y\n@@ -1,6 +1,6 @@\n 1\n 2\n-3\n+three\n 4\n 5\n 6\n@@ -15,6 +15,5 @@\n 15\n 16\n 17\n-18\n 19\n 20\n")
        // The script of a random edit turns the old lines into the new ones.
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<50 {
            let a = (0..<Int.random(in: 0..<30, using: &generator)).map { _ in "\(Int.random(in: 0..<5, using: &generator))\n" }
            let b = (0..<Int.random(in: 0..<30, using: &generator)).map { _ in "\(Int.random(in: 0..<5, using: &generator))\n" }
            let script = LineDiff.edits(a.map { Substring($0) }, b.map { Substring($0) })
            var rebuilt: [String] = []
            var oldSeen: [Int] = []
            for edit in script {
                switch edit {
                case .same(let i, let j):
                    #expect(a[i] == b[j])
                    rebuilt.append(b[j])
                    oldSeen.append(i)
                case .delete(let i): oldSeen.append(i)
                case .insert(let j): rebuilt.append(b[j])
                }
            }
            #expect(rebuilt == b)
            #expect(oldSeen == Array(a.indices))
        }
    }
}
