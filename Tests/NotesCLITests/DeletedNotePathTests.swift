import Foundation
import RecordStore
import TestSupport
import Testing

/// `log --deleted` and `note undelete`: every path and ID the log prints is one undelete takes,
/// and a note whose folder is gone comes back at its old path (or `--into` a folder).
@Suite struct DeletedNotePathTests {
    /// The path column of `log --deleted` (after the kind), one per deleted note.
    private func deletedPaths(_ db: String) throws -> [String] {
        try notesfs(["log", "--deleted"], db: db).lines.map { line in
            let fields = line.components(separatedBy: "  ")
            return fields.dropFirst(4).joined(separator: "  ")
        }
    }

    @Test func everyPrintedPathIsOneUndeleteTakes() throws {
        let db = makeDatabasePath("deleted-paths")
        for folder in ["Deep", "Deep/Sub", "A", "B", "C"] { #expect(try notesfs(["folder", "new", folder], db: db).status == 0) }
        try notesfs(["note", "new", "Deep/Sub/deep", "--text", "deep\n"], db: db)
        try notesfs(["note", "new", "A/Same", "--text", "in A\n"], db: db)
        try notesfs(["note", "new", "B/Same", "--text", "in B\n"], db: db)
        // Two notes of one title deleted from one folder, one after the other.
        try notesfs(["note", "new", "C/Dup", "--text", "first\n"], db: db)
        try notesfs(["note", "rm", "C/Dup"], db: db)
        try notesfs(["note", "new", "C/Dup", "--text", "second\n"], db: db)
        try notesfs(["note", "rm", "C/Dup"], db: db)
        for folder in ["Deep", "A", "B"] { #expect(try notesfs(["folder", "rm", folder], db: db).status == 0) }
        let paths = try deletedPaths(db)
        #expect(paths.count == 5, "\(paths)")
        #expect(Set(paths).count == paths.count, "every path printed once: \(paths)")
        #expect(paths.contains("Deep/Sub/deep.md"), "the path it had: \(paths)")
        // Each printed path brings back its own note.
        var texts: [String] = []
        for path in paths {
            let undelete = try notesfs(["note", "undelete", path], db: db)
            #expect(undelete.status == 0, "\(path): \(undelete.stderr)")
        }
        #expect(try notesfs(["log", "--deleted"], db: db).out == "")
        for path in ["Deep/Sub/deep", "A/Same", "B/Same"] {
            let cat = try notesfs(["note", "cat", path], db: db)
            #expect(cat.status == 0, "\(path) is back at its path: \(cat.stderr)")
            texts.append(cat.out)
        }
        #expect(texts == ["deep\n", "in A\n", "in B\n"])
        let list = try notesfs(["ls", "C"], db: db)
        #expect(list.lines.count == 2, "both Dup notes are back: \(list.out) \(list.stderr)")
        #expect(try notesfs(["fsck"], db: db).status == 0)
    }

    @Test func printedIDsAndIntoAFolder() throws {
        let db = makeDatabasePath("deleted-ids")
        try notesfs(["folder", "new", "Gone"], db: db)
        try notesfs(["folder", "new", "Inbox"], db: db)
        try notesfs(["note", "new", "Gone/N", "--text", "n\n"], db: db)
        try notesfs(["note", "new", "Gone/M", "--text", "m\n"], db: db)
        #expect(try notesfs(["folder", "rm", "Gone"], db: db).status == 0)
        let lines = try notesfs(["log", "--deleted"], db: db).lines
        #expect(lines.count == 2)
        let byPath = Dictionary(
            uniqueKeysWithValues: lines.map { line in
                (line.components(separatedBy: "  ").dropFirst(4).joined(separator: "  "), String(line.split(separator: " ")[0]))
            })
        // By the ID it printed.
        let id = try #require(byPath["Gone/N.md"], "\(lines)")
        #expect(try notesfs(["note", "undelete", id], db: db).status == 0)
        #expect(try notesfs(["note", "cat", "Gone/N"], db: db).out == "n\n")
        // Into a folder of one's choosing.
        let into = try notesfs(["note", "undelete", "Gone/M.md", "--into", "Inbox"], db: db)
        #expect(into.status == 0, "\(into.stderr)")
        #expect(try notesfs(["note", "cat", "Inbox/M"], db: db).out == "m\n")
        // Any version ID `log` prints for a deleted note brings that version back.
        let environment = ["NOTESFS_HISTORY_INTERVAL": "0"]
        try notesfs(["note", "new", "Gone/O", "--text", "old\n"], db: db, environment: environment)
        try notesfs(["note", "new", "Gone/O", "--text", "new\n", "--force"], db: db, environment: environment)
        #expect(try notesfs(["note", "rm", "Gone/O"], db: db).status == 0)
        let all = try notesfs(["log"], db: db).lines.filter { $0.hasSuffix("  edit  Gone/O.md") }
        let older = try #require(all.first.map { String($0.split(separator: " ")[0]) }, "\(all)")
        let back = try notesfs(["note", "undelete", older], db: db)
        #expect(back.status == 0, "\(back.stderr)")
        #expect(try notesfs(["note", "cat", "Gone/O"], db: db).out == "old\n")
        // A version of a note that is not deleted: said so.
        let live = try notesfs(["note", "undelete", older], db: db)
        #expect(live.status != 0 && live.stderr.contains("note restore"), "\(live.stderr)")
    }
}
