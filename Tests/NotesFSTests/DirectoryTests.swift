/// Directories: mkdir, rmdir (ENOTEMPTY, ENOTDIR), nested folders, readdir while entries change.

import Foundation
import Glibc
import Notes
import RecordStore
import TestSupport
import Testing

@Suite(.tags(.mount), .needsFUSE) struct DirectoryTests {
    @Test func mkdirCreatesAFolderRecord() throws {
        try withNotesMount { m in
            #expect(mkdir(m.path("Projects"), 0o755) == 0)
            #expect(mkdir(m.path("Projects/Sub"), 0o755) == 0)
            #expect(writeFile(m.path("Projects/Sub/deep.md"), "deep") == 0)
            let folders = m.database.queryMetadata(Query(recordType: Folder.recordType))
            #expect(folders.count == 2)
            let projects = try #require(folders.first { $0.record["name"]?.stringValue == "Projects" })
            let sub = try #require(folders.first { $0.record["name"]?.stringValue == "Sub" })
            #expect(projects.record["parent"] == nil)
            #expect(sub.record["parent"]?.referenceValue?.recordID == projects.recordID)
            #expect(note(m.database, titled: "deep")?.folder == sub.recordID)
            let (st, _) = statOf(m.path("Projects/Sub"))
            #expect(st.map { $0.st_mode & S_IFMT } == S_IFDIR)
            #expect(st?.st_nlink == 2)
            #expect(st.map { UInt64($0.st_ino) } == sub.identity)
            #expect(errnoOf { mkdir(m.path("Projects"), 0o755) } == EEXIST)
        }
    }

    @Test func rmdirRemovesOnlyEmptyFolders() throws {
        try withNotesMount { m in
            #expect(mkdir(m.path("empty"), 0o755) == 0)
            #expect(mkdir(m.path("full"), 0o755) == 0)
            #expect(writeFile(m.path("full/n.md"), "x") == 0)
            #expect(writeFile(m.path("file.md"), "x") == 0)
            #expect(errnoOf { rmdir(m.path("full")) } == ENOTEMPTY)
            #expect(readFile(m.path("full/n.md")) == "x")
            #expect(errnoOf { rmdir(m.path("file.md")) } == ENOTDIR)
            #expect(errnoOf { rmdir(m.path("missing")) } == ENOENT)
            #expect(errnoOf { unlink(m.path("empty")) } == EISDIR)
            #expect(rmdir(m.path("empty")) == 0)
            #expect(statOf(m.path("empty")).1 == ENOENT)
            let names = m.database.queryMetadata(Query(recordType: Folder.recordType)).compactMap { $0.record["name"]?.stringValue }
            #expect(names == ["full"])
            #expect(fileRecordCount(m.database) == 2)
        }
    }

    @Test func readdirWhileEntriesChange() throws {
        try withNotesMount { m in
            // Long names so the listing needs several getdents calls (glibc reads 32 KiB at a time).
            let padding = String(repeating: "x", count: 90)
            let stable = (0..<400).map { String(format: "s%03d-", $0) + padding + ".md" }
            let doomed = (0..<100).map { String(format: "d%03d-", $0) + padding + ".md" }
            for name in stable + doomed { #expect(writeFile(m.path(name), "") == 0) }
            let directory = try #require(opendir(m.root))
            defer { closedir(directory) }
            var seen: [String] = []
            while seen.count < 20, let entry = readdir(directory) { seen.append(entryName(entry)) }
            for name in doomed { #expect(unlink(m.path(name)) == 0) }
            for i in 0..<100 { #expect(writeFile(m.path(String(format: "n%03d-", i) + padding + ".md"), "") == 0) }
            while let entry = readdir(directory) { seen.append(entryName(entry)) }
            let counts = Dictionary(seen.map { ($0, 1) }, uniquingKeysWith: +)
            #expect(counts.filter { $0.value > 1 }.isEmpty, "repeated entries")
            let missing = stable.filter { counts[$0] == nil }
            #expect(missing.isEmpty, "skipped \(missing.count) entries that existed throughout")
        }
    }

    @Test func listingShowsFoldersNotesAndAttachments() throws {
        try withNotesMount(seed: { db in
            let folder = try saveFolder(db, name: "F")
            try saveNote(db, title: "inside", text: "i", folder: folder.recordID)
            try saveNote(db, title: "top", text: "t")
        }) { m in
            #expect(listing(m.root) == ["F", "top.md"])
            #expect(listing(m.path("F")) == ["inside.md"])
            #expect(readFile(m.path("F/inside.md")) == "i")
            #expect(listing(m.path("top.md")) == nil)
            #expect(errnoOf { opendir(m.path("top.md")) == nil ? -1 : 0 } == ENOTDIR)
        }
    }
}
