import Foundation
import Glibc
import Index
import Notes
import RecordStore
import TestSupport
import Testing

/// The database's disk fills up while mounted: a save that cannot be written fails at `close`
/// with `ENOSPC`, the bytes stay readable through the mount, and once there is room again they
/// are saved (tried again every second), so nothing written is lost and the database checks clean.
@Suite struct FullDiskTests {
    @Test(.tags(.mount), .needsFUSE) func savesThatFindTheDiskFullKeepTheirBytes() throws {
        try withTmpfs("notesfs-full", options: "size=4m") { point in try savesThatFindTheDiskFullKeepTheirBytes(on: point) }
    }

    private func savesThatFindTheDiskFullKeepTheirBytes(on point: String) throws {
        let db = point + "/db"
        let newText = String(repeating: "a new line written on a full disk\n", count: 3_000)  // ~100 KB
        let appended = String(repeating: "edited on a full disk\n", count: 1_000)  // 22 KB: more than the pages left
        try withNotesMount(databasePath: db) { m in
            #expect(writeFile(m.path("kept.md"), "before the disk filled\n") == 0)
            let fill = try run(["/bin/dd", "if=/dev/zero", "of=\(point)/fill", "bs=64k"])
            #expect(fill.status != 0 && fill.stderr.contains("No space left"), "\(fill)")
            // The last pages too (tmpfs allocates whole pages).
            let last = try run(["/bin/dd", "if=/dev/zero", "of=\(point)/fill-pages", "bs=4k"])
            #expect(last.status != 0, "\(last)")
            // A new note and an edit of an old one: both refused at close, with ENOSPC.
            #expect(writeFile(m.path("new.md"), newText) == ENOSPC)
            let fd = open(m.path("kept.md"), O_WRONLY | O_APPEND)
            #expect(fd >= 0)
            #expect(write(fd, appended, appended.utf8.count) == appended.utf8.count)
            #expect((close(fd) == 0 ? 0 : errno) == ENOSPC)
            // The mount still shows what was written.
            #expect(listing(m.root) == ["kept.md", "new.md"])
            #expect(readFile(m.path("new.md")) == newText)
            #expect(readFile(m.path("kept.md")) == "before the disk filled\n" + appended)
            // Room again: both are saved within a few seconds, with no further close.
            try FileManager.default.removeItem(atPath: point + "/fill")
            try FileManager.default.removeItem(atPath: point + "/fill-pages")
            let saved = eventually(10) {
                let texts = Dictionary(notes(m.database).map { ($0.title, $0.text) }, uniquingKeysWith: { a, _ in a })
                return texts == ["kept": "before the disk filled\n" + appended, "new": newText]
            }
            #expect(saved, "\(notes(m.database).map { ($0.title, $0.text.count) })")
            #expect(readFile(m.path("new.md")) == newText)
            #expect(writeFile(m.path("new.md"), "rewritten\n") == 0)
        }
        let database = try RecordDatabase(path: db)
        defer { try? database.close() }
        let texts = Dictionary(uniqueKeysWithValues: notes(database).map { ($0.title, $0.text) })
        #expect(texts == ["kept": "before the disk filled\n" + appended, "new": "rewritten\n"])
        #expect(try database.check().problems.isEmpty)
    }

    /// Free bytes of the filesystem at `path`.
    private func freeBytes(_ path: String) -> Int {
        var st = statvfs()
        #expect(statvfs(path, &st) == 0)
        return Int(st.f_bavail) * Int(st.f_frsize)
    }

    /// Fills the filesystem at `point` to its last page.
    private func fill(_ point: String) throws {
        let fill = try run(["/bin/dd", "if=/dev/zero", "of=\(point)/fill", "bs=64k"])
        #expect(fill.status != 0 && fill.stderr.contains("No space left"), "\(fill)")
        let last = try run(["/bin/dd", "if=/dev/zero", "of=\(point)/fill-pages", "bs=4k"])
        #expect(last.status != 0, "\(last)")
    }

    /// Space a delete freed on a full disk goes to the store's reserve before any save: saves that
    /// follow (a failed save tried again, a sync) cannot take it all, so the next delete still
    /// works. Without the rule, the saves filled the freed space and the second delete failed.
    @Test(.tags(.mount), .notInFastRuns) func spaceADeleteFreedIsKeptForTheNextDelete() throws {
        try withTmpfs("notesfs-full-reserve", options: "size=8m") { point in
            let database = try RecordDatabase(path: point + "/db", backgroundThread: false)
            defer { try? database.close() }
            for name in ["first", "second"] {
                var record = Record(recordType: "Item", recordID: RecordID(recordName: name))
                record["text"] = .string(String(repeating: "x", count: 20_000))
                try database.modify(saving: [record])
            }
            try fill(point)
            var reservations = 0
            while reservations < 1_000_000, (try? database.reserveIdentity()) != nil { reservations += 1 }
            try database.modify(deleting: [RecordID(recordName: "first")])
            // Saves until one finds no room: the freed space is the reserve's again first.
            var saves = 0
            var refusal: RecordStoreError?
            while saves < 10_000, refusal == nil {
                var record = Record(recordType: "Item", recordID: RecordID(recordName: "later\(saves)"))
                record["text"] = .string("saved after the delete \(saves)")
                do throws(RecordStoreError) { try database.modify(saving: [record]) } catch { refusal = error }
                saves += 1
            }
            #expect(refusal.map { "\($0)".contains("No space left") } == true, "\(String(describing: refusal))")
            #expect(FileManager.default.fileExists(atPath: point + "/db/reserve"))
            try database.modify(deleting: [RecordID(recordName: "second")])
            #expect((try? database.record(for: RecordID(recordName: "second"))) == nil)
            #expect(try database.check().problems.isEmpty)
        }
    }

    /// A prune on a full disk goes without the versions a delete keeps, never without making whole
    /// the versions kept as deltas of what it deletes: every version left reads back.
    @Test(.tags(.mount), .notInFastRuns) func aFullDiskNeverLeavesADeltaWithoutItsBase() throws {
        try withTmpfs("notesfs-full-delta", options: "size=8m") { point in
            let database = try RecordDatabase(path: point + "/db", backgroundThread: false)
            defer { try? database.close() }
            VersionHistory.install(on: database, settings: HistorySettings(interval: 0))
            var record = Note(title: "N", text: "").record
            var texts: [String] = []
            for n in 1...12 {
                let text = String(repeating: "a paragraph every version shares\n", count: 700) + (1...n).map { "line \($0)\n" }.joined()
                record["text"] = .string(text)
                record = try database.modify(saving: [record]).savedRecords.first { $0.recordType == Note.recordType }!
                texts.append(text)
            }
            try VersionRetention.prune(in: database, settings: HistorySettings(interval: 0, budgetFraction: 1))
            let versions = VersionHistory.versions(ofNoteNamed: record.recordID.recordName, in: database)
            #expect(versions.filter(\.isDelta).count == 10)
            try fill(point)
            var reservations = 0
            while reservations < 1_000_000, (try? database.reserveIdentity()) != nil { reservations += 1 }
            // Every other version: each the base of the delta before it (their whole texts, 115 KB,
            // are more than the reserve lends what a hook adds: the delete is tried again short of space).
            let doomed = versions.enumerated().filter { $0.offset % 2 == 1 }.map(\.element.recordID)
            let deleted = (try? database.modify(deleting: doomed, reason: .prune)) != nil
            let left = VersionHistory.versions(ofNoteNamed: record.recordID.recordName, in: database)
            #expect(left.count == (deleted ? versions.count - doomed.count : versions.count))
            let expected = Dictionary(uniqueKeysWithValues: zip(versions.map(\.recordID), texts.dropLast()))
            for version in left {
                #expect(try VersionHistory.fullVersion(version.recordID, in: database).text == expected[version.recordID])
            }
            #expect(try database.check().problems.isEmpty)
        }
    }

    /// The search index is derived: it never takes the last megabytes the notes need. Under the
    /// floor a catch-up fails at once (`SQLITE_FULL`) and writes nothing, and a search still finds
    /// every note (by a scan elsewhere); room again, the index catches up.
    @Test(.tags(.mount), .notInFastRuns) func theSearchIndexLeavesTheLastMegabytesToTheNotes() async throws {
        try await withTmpfs("notesfs-full-index", options: "size=16m") { point in
            let notes = NotesManager(database: try RecordDatabase(path: point + "/db", backgroundThread: false))
            let index = NotesSearchIndex(database: notes.database)
            _ = try await notes.save(note: Note(title: "first", text: "indexed before the disk filled"))
            try index.catchUp()
            // Free space left: 3 MiB, under the 4 MiB floor of a 16 MiB filesystem; a note of 300 KB fits.
            try fill(point)
            #expect(truncate(point + "/fill", off_t(try fileSize(point + "/fill") - (3 << 20))) == 0)
            _ = try await notes.save(note: Note(title: "late", text: String(repeating: "lateword filler text ", count: 15_000)))
            let indexFiles = { () -> Int in
                (try? FileManager.default.contentsOfDirectory(atPath: point + "/db/indexes"))?
                    .reduce(0) { $0 + ((try? self.fileSize(point + "/db/indexes/" + $1)) ?? 0) } ?? -1
            }
            let before = indexFiles()
            #expect(throws: SQLiteError.self) { try index.catchUp() }
            #expect(indexFiles() == before)
            let found = try index.search(try SearchQuery("lateword"), limit: 10)
            #expect(found.hits.count == 1)
            #expect(found.scannedBecause?.contains("leaves to the notes") == true, "\(String(describing: found.scannedBecause))")
            try FileManager.default.removeItem(atPath: point + "/fill")
            try FileManager.default.removeItem(atPath: point + "/fill-pages")
            try index.catchUp()
            let again = try index.search(try SearchQuery("lateword"), limit: 10)
            #expect(again.hits.count == 1 && again.scannedBecause == nil)
            try notes.database.close()
        }
    }

    private func fileSize(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
    }

    /// A full disk through the CLI: every read command works (opening writes nothing it needs), a
    /// `note new` that exits 0 survives, and `note rm` frees space.
    @Test(.tags(.mount), .notInFastRuns) func readsWorkAndDeletesFreeSpaceOnAFullDisk() throws {
        let binary = notesfsBinary
        try withTmpfs("notesfs-full-cli", options: "size=8m") { point in
            let db = point + "/db"
            func notesfs(_ arguments: String) throws -> ProgramResult {
                try sh("\(shellQuoted(binary)) --db \(shellQuoted(db)) \(arguments)")
            }
            #expect(try notesfs("note new kept --text hello").status == 0)
            let big = String(repeating: "a line of a big note\n", count: 100_000)  // 2.1 MB
            try Data(big.utf8).write(to: URL(fileURLWithPath: NSTemporaryDirectory() + "/notesfs-full-big-\(getpid())"))
            defer { try? FileManager.default.removeItem(atPath: NSTemporaryDirectory() + "/notesfs-full-big-\(getpid())") }
            #expect(try notesfs("note new big < \(shellQuoted(NSTemporaryDirectory() + "/notesfs-full-big-\(getpid())"))").status == 0)
            try fill(point)
            // New notes until even the journal is full: each one that exits 0 must survive.
            var saved: [String] = []
            for i in 0..<40 {
                let result = try notesfs("note new n\(i) --text 'written on a full disk \(i)'")
                guard result.status == 0 else {
                    #expect(result.stderr.contains("No space left"), "\(result)")
                    break
                }
                saved.append("n\(i)")
            }
            #expect(saved.count < 40, "the journal never filled up")
            let ls = try notesfs("ls")
            #expect(ls.status == 0, "\(ls)")
            #expect(Set(ls.out.split(separator: "\n").map(String.init)) == Set((["kept", "big"] + saved).map { $0 + ".md" }))
            for name in saved {
                #expect(try notesfs("note cat \(name)").out == "written on a full disk \(name.dropFirst())")
            }
            let cat = try notesfs("note cat kept")
            #expect(cat.status == 0 && cat.out == "hello", "\(cat)")
            let fsck = try notesfs("fsck")
            #expect(fsck.status == 0, "\(fsck)")
            let exported = makeTemporaryDirectory("notesfs-full-export")
            defer { try? FileManager.default.removeItem(atPath: exported) }
            let export = try notesfs("export \(shellQuoted(exported + "/out"))")
            #expect(export.status == 0, "\(export)")
            #expect(try String(contentsOfFile: exported + "/out/kept.md", encoding: .utf8) == "hello")
            // Deleting frees space, full disk or not.
            let before = freeBytes(point)
            let rm = try notesfs("note rm big")
            #expect(rm.status == 0, "\(rm)")
            #expect(freeBytes(point) > before + 1_000_000)
            #expect(try notesfs("ls").out.split(separator: "\n").count == saved.count + 1)
            // Room again: every note is still there, and the database checks clean.
            try FileManager.default.removeItem(atPath: point + "/fill")
            #expect(try notesfs("fsck").status == 0)
            #expect(try notesfs("note cat \(saved.last ?? "kept")").status == 0)
        }
    }

    /// `rm` through the mount on a full disk succeeds and frees the file's space.
    @Test(.tags(.mount), .needsFUSE) func unlinkThroughTheMountFreesSpaceOnAFullDisk() throws {
        try withTmpfs("notesfs-full-rm", options: "size=8m") { point in
            let db = point + "/db"
            try withNotesMount(databasePath: db) { m in
                #expect(writeFile(m.path("big.md"), String(repeating: "a line of a big note\n", count: 100_000)) == 0)
                #expect(writeFile(m.path("small.md"), "small\n") == 0)
                try fill(point)
                // Small notes until a save fails: the disk is full to its last page.
                var failed = false
                for i in 0..<40 where !failed { failed = writeFile(m.path("n\(i).md"), "note \(i)\n") != 0 }
                #expect(failed)
                // And the journal to its last byte: commits of identity reservations (a line
                // shorter than a delete's) until one finds no room.
                var reservations = 0
                while reservations < 1_000_000, (try? m.database.reserveIdentity()) != nil { reservations += 1 }
                #expect(reservations < 1_000_000)
                let before = freeBytes(point)
                #expect(unlink(m.path("small.md")) == 0, "\(String(cString: strerror(errno)))")
                #expect(unlink(m.path("big.md")) == 0, "\(String(cString: strerror(errno)))")
                #expect(freeBytes(point) > before + 1_000_000)
                #expect(listing(m.root)?.contains("big.md") == false)
            }
        }
    }

    /// A commit whose journal line fits and whose record file does not: its large field is read
    /// from the journal, by the process that made it and by one that opens the database then.
    @Test(.tags(.mount), .notInFastRuns) func aRecordWhoseFileCouldNotBeWrittenIsReadFromTheJournal() throws {
        try withTmpfs("notesfs-full-journal", options: "size=8m") { point in
            let database = try RecordDatabase(path: point + "/db", backgroundThread: false)
            defer { try? database.close() }
            try fill(point)
            var saved: [String: String] = [:]
            for i in 0..<40 {
                var record = Record(recordType: "Note", recordID: RecordID(recordName: "n\(i)"))
                let text = "a text longer than the index keeps, \(i): " + String(repeating: "x", count: 400)
                record["title"] = .string("n\(i)")
                record["text"] = .string(text)
                guard (try? database.modify(saving: [record])) != nil else { break }
                saved["n\(i)"] = text
            }
            #expect(!saved.isEmpty)
            for reader in [database, try RecordDatabase(path: point + "/db", backgroundThread: false)] {
                for (name, text) in saved {
                    #expect(try reader.record(for: RecordID(recordName: name))["text"] == .string(text))
                }
                #expect(try reader.check().problems.isEmpty)
            }
        }
    }
}
