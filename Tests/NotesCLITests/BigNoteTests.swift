import Foundation
import TestSupport
import Testing

/// A note of any size is stored, read back and checked by the CLI (the store's record files hold
/// at most 64 MiB: a larger note is kept as its content asset, as the mount keeps it).
@Suite struct BigNoteTests {
    @Test func aSeventyMebibyteNoteFromAPipeIsStoredAndReadBackWhole() throws {
        let db = makeDatabasePath("big-note")
        try notesfs(["folder", "new", "F"], db: db)
        var bytes = Data(capacity: 70 << 20)
        let line = Data("a line of a very long note, with é and 🧪\n".utf8)
        while bytes.count < 70 << 20 { bytes.append(line) }
        let new = try notesfs(["note", "new", "F/x"], db: db, stdin: bytes)
        #expect(new.status == 0, "\(new.stderr)")
        let cat = try notesfs(["note", "cat", "F/x"], db: db)
        #expect(cat.status == 0, "\(cat.stderr)")
        #expect(cat.stdout == bytes)
        let fsck = try notesfs(["fsck"], db: db)
        #expect(fsck.status == 0, "\(fsck.out)\(fsck.stderr)")
        // No spool file is left in the database's temp directory.
        #expect(try FileManager.default.contentsOfDirectory(atPath: db + "/tmp").filter { $0.hasPrefix("spool-") }.isEmpty)
    }
}
