/// A folder tree 20,000 deep (as `mkdir d; cd d` in a loop makes in the mount)
/// is exported, imported, removed and checked without recursion: export and folder rm once died
/// with SIGSEGV.

import Foundation
import Notes
import RecordStore
import TestSupport
import Testing

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

@Suite struct DeepFolderTreeTests {
    static let depth = 20_000

    /// `top/d/d/…/d/leaf.md`: `top` and `depth` folders named `d` below it, the note in the deepest.
    private func seed(_ db: String) throws {
        let store = try RecordDatabase(path: db, backgroundThread: false)
        defer { try? store.close() }
        var records = [Folder(name: "top").record]
        for _ in 0..<Self.depth { records.append(Folder(name: "d", parent: records[records.count - 1].recordID).record) }
        records.append(Note(title: "leaf", text: "deep", folder: records[records.count - 1].recordID).record)
        try store.modify(saving: records)
    }

    /// How many `d` directories nest under `directory`, and the text of `leaf.md` in the deepest.
    private func walkExport(_ directory: String) -> (depth: Int, leaf: String?) {
        var fd = open(directory, O_RDONLY | O_DIRECTORY)
        var depth = 0
        while true {
            let next = openat(fd, "d", O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
            guard next >= 0 else { break }
            close(fd)
            fd = next
            depth += 1
        }
        defer { close(fd) }
        let leaf = openat(fd, "leaf.md", O_RDONLY | O_NOFOLLOW)
        guard leaf >= 0 else { return (depth, nil) }
        defer { close(leaf) }
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = read(leaf, &buffer, buffer.count)
        return (depth, String(decoding: buffer.prefix(max(0, count)), as: UTF8.self))
    }

    /// What `folder rm top` prints: each folder's path ending in `/`, then the note's.
    private var expectedRemovalListing: (bytes: Int, last: String) {
        var bytes = 0
        for level in 0...Self.depth { bytes += "top/".utf8.count + 2 * level + 1 }
        let last = "top" + String(repeating: "/d", count: Self.depth) + "/leaf.md"
        return (bytes + last.utf8.count + 1, last)
    }

    /// The last of the newline-terminated lines in `data` (found from the end: the output is large).
    private func lastLine(_ data: Data) -> String {
        let body = data.dropLast()
        let start = body.lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? body.startIndex
        return String(decoding: body[start...], as: UTF8.self)
    }

    @Test(.tags(.slow), .notInFastRuns) func exportRemoveAndCheckADeepTree() throws {
        let db = makeDatabasePath("deep")
        try seed(db)
        let scratch = makeTemporaryDirectory("deep-out")
        defer { _ = try? run("/bin/rm", ["-rf", scratch, (db as NSString).deletingLastPathComponent]) }

        let fsck = try notesfs(["fsck"], db: db)
        #expect(fsck.status == 0, "\(fsck.stderr.prefix(500))")

        let out = scratch + "/out"
        let export = try notesfs(["export", out, "--from", "top"], db: db)
        #expect(export.status == 0, "\(export.stderr.prefix(500))")
        #expect(export.stderr.contains("exported 1 note, 0 attachments, 20000 folders"), "\(export.stderr.prefix(500))")
        let exported = walkExport(out)
        #expect(exported.depth == Self.depth)
        #expect(exported.leaf == "deep")

        // And back in: the scan and the import walk the 20,000 directories without recursion.
        let copy = scratch + "/copy"
        let reimport = try notesfs(["import", out], db: copy)
        #expect(reimport.status == 0, "\(reimport.stderr.prefix(500))")
        #expect(reimport.stderr.contains("imported 1 note, 0 attachments, 20000 folders"), "\(reimport.stderr.prefix(500))")
        let leaf = try notesfs(["query", "title == 'leaf'"], db: copy)
        #expect(leaf.out.hasSuffix(String(repeating: "d/", count: Self.depth) + "leaf.md\n"))

        let expected = expectedRemovalListing
        let dryRun = try notesfs(["folder", "rm", "--dry-run", "top"], db: db)
        #expect(dryRun.status == 0, "\(dryRun.stderr.prefix(500))")
        #expect(dryRun.stdout.count == expected.bytes)
        #expect(dryRun.stdout.prefix(9) == Data("top/\ntop/".utf8))
        #expect(lastLine(dryRun.stdout) == expected.last)
        #expect(dryRun.stderr.contains("would remove 20001 folders, 1 note, 0 attachments"), "\(dryRun.stderr.prefix(500))")

        let remove = try notesfs(["folder", "rm", "top"], db: db)
        #expect(remove.status == 0, "\(remove.stderr.prefix(500))")
        #expect(remove.stdout.count == expected.bytes)
        #expect(lastLine(remove.stdout) == expected.last)
        #expect(remove.stderr.contains("removed 20001 folders, 1 note, 0 attachments"), "\(remove.stderr.prefix(500))")
        #expect(try notesfs(["ls"], db: db).out == "")
        #expect(try notesfs(["fsck"], db: db).status == 0)
    }
}
