import Foundation
import Glibc
import Notes
import RecordStore
import Testing

/// The database's disk fills up while mounted: a save that cannot be written fails at `close`
/// with `ENOSPC`, the bytes stay readable through the mount, and once there is room again they
/// are saved (tried again every second), so nothing written is lost and the database checks clean.
@Suite struct FullDiskTests {
    @Test func savesThatFindTheDiskFullKeepTheirBytes() throws {
        try withTmpfs("notesfs-full", options: "size=4m") { point in try savesThatFindTheDiskFullKeepTheirBytes(on: point) }
    }

    private func savesThatFindTheDiskFullKeepTheirBytes(on point: String) throws {
        let db = point + "/db"
        let newText = String(repeating: "a new line written on a full disk\n", count: 3_000)  // ~100 KB
        let appended = String(repeating: "edited on a full disk\n", count: 1_000)  // 22 KB: more than the pages left
        try withNotesMount(databasePath: db) { m in
            #expect(writeFile(m.path("kept.md"), "before the disk filled\n") == 0)
            let fill = try run(["/bin/dd", "if=/dev/zero", "of=\(point)/fill", "bs=64k"])
            #expect(fill.status != 0 && fill.error.contains("No space left"), "\(fill)")
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
            let saved = poll(seconds: 10) {
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
}
