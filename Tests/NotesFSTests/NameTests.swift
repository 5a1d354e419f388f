/// File names (slash, empty title, collisions) and the errno of refused operations.

import Foundation
import Glibc
import Notes
import RecordStore
import TestSupport
import Testing

@Suite(.tags(.mount), .needsFUSE) struct NameTests {
    @Test func slashInATitleShowsAsDivisionSlash() throws {
        try withNotesMount(seed: { db in try saveNote(db, title: "a/b", text: "slashed") }) { m in
            #expect(listing(m.root) == ["a\u{2215}b.md"])
            #expect(readFile(m.path("a\u{2215}b.md")) == "slashed")
            // Renaming back to a name with ∕ stores a / in the title.
            #expect(rename(m.path("a\u{2215}b.md"), m.path("c\u{2215}d.md")) == 0)
            #expect(notes(m.database).map(\.title) == ["c/d"])
            // A new file with ∕ in its name gets a / in its title.
            #expect(writeFile(m.path("x\u{2215}y.md"), "") == 0)
            #expect(note(m.database, titled: "x/y") != nil)
        }
    }

    @Test func emptyTitleShowsAsUntitled() throws {
        try withNotesMount(seed: { db in try saveNote(db, title: "", text: "no title") }) { m in
            #expect(listing(m.root) == ["Untitled.md"])
            #expect(readFile(m.path("Untitled.md")) == "no title")
        }
    }

    @Test func sameTitlesGetStableSuffixes() throws {
        try withDatabaseDirectory { db in
            var first = ""
            var second = ""
            var expected: [String] = []
            try withNotesMount(
                databasePath: db,
                seed: { db in
                    first = try saveNote(db, title: "T", text: "first").recordID.recordName
                    usleep(5_000)
                    second = try saveNote(db, title: "T", text: "second").recordID.recordName
                }
            ) { m in
                let suffixed = EntryNames.suffixed("T.md", String(EntryNames.suffixCharacters(second).prefix(6)))
                #expect(suffixed.hasPrefix("T (") && suffixed.hasSuffix(").md"))
                expected = ["T.md", suffixed].sorted()
                #expect(listing(m.root) == expected)
                #expect(recordName(m.path("T.md")) == first)
                #expect(readFile(m.path("T.md")) == "first")
                #expect(recordName(m.path(suffixed)) == second)
                #expect(readFile(m.path(suffixed)) == "second")
            }
            try withNotesMount(databasePath: db) { m in
                #expect(listing(m.root) == expected)
                #expect(recordName(m.path("T.md")) == first)
            }
        }
    }

    @Test func nameLengthLimit() throws {
        try withNotesMount { m in
            let longest = String(repeating: "n", count: 252) + ".md"  // 255 bytes
            #expect(writeFile(m.path(longest), "ok") == 0)
            #expect(readFile(m.path(longest)) == "ok")
            let tooLong = String(repeating: "n", count: 253) + ".md"  // 256 bytes
            #expect(writeFile(m.path(tooLong), "no") == ENAMETOOLONG)
            #expect(errnoOf { mkdir(m.path(String(repeating: "d", count: 256)), 0o755) } == ENAMETOOLONG)
            #expect(renameErrno(m.path(longest), m.path(tooLong)) == ENAMETOOLONG)
            // Multi-byte: 128 × "é" is 256 bytes.
            #expect(writeFile(m.path(String(repeating: "é", count: 128)), "") == ENAMETOOLONG)
            #expect(fileRecordCount(m.database) == 1)
        }
    }

    @Test func nonUTF8NamesAreRefusedWithEILSEQ() throws {
        try withNotesMount { m in
            let path = Array(m.root.utf8) + Array("/bad".utf8) + [0xFF] + Array(".md".utf8)
            let cPath = path.map { CChar(bitPattern: $0) } + [0]
            let fd = cPath.withUnsafeBufferPointer { open($0.baseAddress!, O_CREAT | O_WRONLY, 0o644) }
            let openErrno = fd < 0 ? errno : 0
            if fd >= 0 { close(fd) }
            #expect(openErrno == EILSEQ)
            let mkdirErrno = cPath.withUnsafeBufferPointer { buffer in errnoOf { mkdir(buffer.baseAddress!, 0o755) } }
            #expect(mkdirErrno == EILSEQ)
            #expect(listing(m.root) == [])
            #expect(fileRecordCount(m.database) == 0)
        }
    }

    @Test func specialFilesAndLinksAreRecordsButScratchCannotBeLinked() throws {
        // Every node type is kept (NodeTypeTests); only a hard link to editor scratch is refused.
        try withNotesMount { m in
            #expect(writeFile(m.path("n.md"), "x") == 0)
            #expect(errnoOf { mkfifo(m.path("fifo"), 0o644) } == 0)
            #expect(errnoOf { mknod(m.path("dev"), S_IFCHR | 0o644, dev_t(0x103)) } == 0)
            #expect(errnoOf { mknod(m.path("sock"), S_IFSOCK | 0o644, 0) } == 0)
            #expect(errnoOf { link(m.path("n.md"), m.path("hard.md")) } == 0)
            #expect(errnoOf { symlink("n.md", m.path("soft.md")) } == 0)
            #expect(writeFile(m.path("n.md~"), "scratch") == 0)
            #expect(errnoOf { link(m.path("n.md~"), m.path("scratch-link")) } == EPERM)
            #expect(listing(m.root)?.sorted() == ["dev", "fifo", "hard.md", "n.md", "n.md~", "sock", "soft.md"])
            #expect(fileRecordCount(m.database) == 1)
            #expect(unlink(m.path("n.md~")) == 0)
            // mknod of a regular file is a create.
            #expect(errnoOf { mknod(m.path("plain.md"), S_IFREG | 0o644, 0) } == 0)
            #expect(note(m.database, titled: "plain") != nil)
        }
    }

    @Test func missingAndExistingNames() throws {
        try withNotesMount { m in
            #expect(statOf(m.path("none.md")).1 == ENOENT)
            #expect(errnoOf { open(m.path("none.md"), O_RDONLY) } == ENOENT)
            #expect(errnoOf { open(m.path("nodir/x.md"), O_CREAT | O_WRONLY, 0o644) } == ENOENT)
            #expect(writeFile(m.path("here.md"), "x") == 0)
            #expect(errnoOf { open(m.path("here.md"), O_CREAT | O_EXCL | O_WRONLY, 0o644) } == EEXIST)
            #expect(errnoOf { mkdir(m.path("here.md"), 0o755) } == EEXIST)
            #expect(errnoOf { open(m.path("here.md/x"), O_RDONLY) } == ENOTDIR)
            #expect(fileRecordCount(m.database) == 1)
        }
    }
}
