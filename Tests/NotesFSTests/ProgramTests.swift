/// Real programs on the mount (the kernel is in between): each keeps the note's recordName and
/// leaves no stray records.

import Foundation
import Glibc
import Notes
import RecordStore
import TestSupport
import Testing

/// Checks that `path` still is record `name` with `text`, and that the database holds `count` file records.
private func expectNote(
    _ m: NotesMount, _ path: String, recordName name: String, text: String, fileRecords count: Int,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(recordName(m.path(path)) == name, "recordName changed", sourceLocation: sourceLocation)
    #expect(readFile(m.path(path)) == text, sourceLocation: sourceLocation)
    #expect(note(m.database, recordName: name)?.text == text, sourceLocation: sourceLocation)
    #expect(fileRecordCount(m.database) == count, "stray or lost records", sourceLocation: sourceLocation)
}

@Suite struct ProgramTests {
    @Test(.tags(.mount), .needsFUSE) func vimDefaultSaveKeepsTheNote() throws {
        try withNotesMount { m in
            #expect(writeFile(m.path("v.md"), "original\n") == 0)
            let name = try #require(recordName(m.path("v.md")))
            let result = try sh(
                "vim -u DEFAULTS -i NONE -es -c 'normal Goadded' -c wq v.md", in: m.root,
                environment: ["HOME": m.root, "TERM": "dumb"])
            #expect(result.status == 0, "\(result)")
            expectNote(m, "v.md", recordName: name, text: "original\nadded\n", fileRecords: 1)
            #expect(listing(m.root) == ["v.md"], "no backup or swap file left")
        }
    }

    /// Real emacs: it takes its `.#x.md` lock link while the buffer is modified (a symlink that
    /// stays in memory), saves with its backup-by-rename, and drops the lock.
    @Test(.tags(.mount), .needsFUSE) func emacsEditWithItsLockLinkKeepsTheNote() throws {
        try withNotesMount { m in
            #expect(writeFile(m.path("e.md"), "first line\n") == 0)
            let name = try #require(recordName(m.path("e.md")))
            let lisp = """
                (progn (find-file "e.md") (goto-char (point-max)) (insert "added by emacs\\n")
                  (princ (format "lock=%s\\n" (file-symlink-p ".#e.md"))) (save-buffer)
                  (princ (format "after=%s\\n" (file-symlink-p ".#e.md"))))
                """
            let result = try run(["/usr/bin/emacs", "-Q", "--batch", "--eval", lisp], in: m.root, environment: ["HOME": m.root])
            #expect(result.status == 0, "\(result)")
            let output = result.out + result.stderr
            #expect(output.contains("lock=") && !output.contains("lock=nil"), "emacs took no lock link: \(output)")
            #expect(output.contains("after=nil"), "the lock link outlived the save: \(output)")
            expectNote(m, "e.md", recordName: name, text: "first line\nadded by emacs\n", fileRecords: 1)
            #expect(listing(m.root)?.filter { !$0.hasSuffix("~") } == ["e.md"], "no lock link or stray file left")
            #expect(recordCount(m.database, Symlink.recordType) == 0, "the lock link is editor scratch: never saved")
        }
    }

    @Test(.tags(.mount), .needsFUSE) func vimWithBackupcopyNoKeepsTheNote() throws {
        // Force the rename path: v.md → v.md~, write a new v.md, delete v.md~.
        try withNotesMount { m in
            #expect(writeFile(m.path("r.md"), "one\n") == 0)
            let name = try #require(recordName(m.path("r.md")))
            let result = try sh(
                "vim -u DEFAULTS -i NONE -es -c 'set backupcopy=no writebackup nobackup' -c 'normal Gotwo' -c wq r.md",
                in: m.root, environment: ["HOME": m.root, "TERM": "dumb"])
            #expect(result.status == 0, "\(result)")
            expectNote(m, "r.md", recordName: name, text: "one\ntwo\n", fileRecords: 1)
            #expect(listing(m.root) == ["r.md"])
        }
    }

    @Test(.tags(.mount), .needsFUSE) func sedInPlaceKeepsTheNote() throws {
        try withNotesMount { m in
            #expect(mkdir(m.path("dir"), 0o755) == 0)
            #expect(writeFile(m.path("dir/s.md"), "hello world\n") == 0)
            let name = try #require(recordName(m.path("dir/s.md")))
            let result = try sh("sed -i 's/world/there/' dir/s.md", in: m.root)
            #expect(result.status == 0, "\(result)")
            expectNote(m, "dir/s.md", recordName: name, text: "hello there\n", fileRecords: 1)
            #expect(listing(m.path("dir")) == ["s.md"])
        }
    }

    @Test(.tags(.mount), .needsFUSE) func tempFileAndReplaceKeepsTheNote() throws {
        // Python's "safe write": a named temp file in the same directory, then os.replace.
        try withNotesMount { m in
            #expect(writeFile(m.path("p.md"), "before") == 0)
            let name = try #require(recordName(m.path("p.md")))
            let script = """
                import os, tempfile
                fd, tmp = tempfile.mkstemp(dir='.')
                os.write(fd, b'after, atomically')
                os.fsync(fd)
                os.close(fd)
                os.replace(tmp, 'p.md')
                """
            let result = try run(["/usr/bin/env", "python3", "-c", script], in: m.root)
            #expect(result.status == 0, "\(result)")
            expectNote(m, "p.md", recordName: name, text: "after, atomically", fileRecords: 1)
            #expect(listing(m.root) == ["p.md"])
            // Same with a .md temp name (a note replacing a note).
            let second = try sh("printf 'via shell' > p.md.new.md && mv p.md.new.md p.md", in: m.root)
            #expect(second.status == 0, "\(second)")
            expectNote(m, "p.md", recordName: name, text: "via shell", fileRecords: 1)
        }
    }

    @Test(.tags(.mount), .needsFUSE) func cpOntoAndIntoTheMount() throws {
        try withNotesMount { m in
            let outside = makeTemporaryDirectory("notesfsout")
            defer { try? FileManager.default.removeItem(atPath: outside) }
            #expect(writeFile(outside + "/src.md", "copied text\n") == 0)
            #expect(writeFile(m.path("c.md"), "to be overwritten, longer than the source") == 0)
            let name = try #require(recordName(m.path("c.md")))
            let result = try sh("cp \(shellQuoted(outside))/src.md c.md && cp \(shellQuoted(outside))/src.md new.md", in: m.root)
            #expect(result.status == 0, "\(result)")
            expectNote(m, "c.md", recordName: name, text: "copied text\n", fileRecords: 2)
            #expect(readFile(m.path("new.md")) == "copied text\n")
        }
    }

    @Test(.tags(.mount), .needsFUSE) func cpArchiveOfATree() throws {
        try withNotesMount { m in
            let outside = makeTemporaryDirectory("notesfstree")
            defer { try? FileManager.default.removeItem(atPath: outside) }
            let tree = outside + "/tree"
            let make = try sh(
                """
                mkdir -p tree/a/b tree/empty && printf 'top\\n' > tree/top.md && printf 'deep\\n' > tree/a/b/deep.md \
                && printf 'x%.0s' $(seq 1 5000) > tree/a/big.md && head -c 3000 /dev/urandom > tree/a/blob.bin \
                && chmod 600 tree/top.md && chmod 700 tree/a && chown 1234:5678 tree/a/b/deep.md \
                && touch -d '2001-02-03 04:05:06' tree/a/b/deep.md tree/a/b
                """, in: outside)
            #expect(make.status == 0, "\(make)")
            let copy = try sh("cp -a \(shellQuoted(tree)) \(shellQuoted(m.root))/")
            #expect(copy.status == 0, "\(copy)")
            #expect(copy.stderr.isEmpty, "\(copy)")
            let diff = try sh("diff -r \(shellQuoted(tree)) \(shellQuoted(m.root))/tree")
            #expect(diff.status == 0, "\(diff)")
            let compare = "find . -printf '%P %y %m %U %G %s %T@\\n' | sort"
            let original = try sh(compare, in: tree)
            let mounted = try sh(compare, in: m.path("tree"))
            // Directory sizes differ (4096 here); compare everything else.
            let strip = { (text: String) in
                text.split(separator: "\n").map { line -> String in
                    var fields = line.split(separator: " ", omittingEmptySubsequences: false)
                    if fields.count == 7, fields[1] == "d" { fields[5] = "-" }
                    return fields.joined(separator: " ")
                }
            }
            #expect(strip(mounted.out) == strip(original.out))
            #expect(fileRecordCount(m.database) == 4)
            #expect(m.database.queryMetadata(Query(recordType: Folder.recordType)).count == 4)
        }
    }

    @Test(.tags(.mount), .needsFUSE) func mvWithinAndIntoTheMount() throws {
        try withNotesMount { m in
            #expect(mkdir(m.path("dest"), 0o755) == 0)
            #expect(writeFile(m.path("m.md"), "moved") == 0)
            let name = try #require(recordName(m.path("m.md")))
            let within = try sh("mv m.md dest/ && mv dest/m.md dest/renamed.md", in: m.root)
            #expect(within.status == 0, "\(within)")
            expectNote(m, "dest/renamed.md", recordName: name, text: "moved", fileRecords: 1)
            let outside = makeTemporaryDirectory("notesfsmv")
            defer { try? FileManager.default.removeItem(atPath: outside) }
            #expect(writeFile(outside + "/in.md", "from outside") == 0)
            let into = try sh("mv \(shellQuoted(outside))/in.md \(shellQuoted(m.root))/dest/")
            #expect(into.status == 0, "\(into)")
            #expect(readFile(m.path("dest/in.md")) == "from outside")
            #expect(fileRecordCount(m.database) == 2)
        }
    }

    @Test(.tags(.mount), .needsFUSE) func rmRecursiveDeletesTheSubtree() throws {
        try withNotesMount { m in
            let make = try sh(
                "mkdir -p t/a/b && echo 1 > t/1.md && echo 2 > t/a/2.md && echo 3 > t/a/b/3.bin && echo k > keep.md", in: m.root)
            #expect(make.status == 0, "\(make)")
            #expect(fileRecordCount(m.database) == 4)
            let result = try sh("rm -r t", in: m.root)
            #expect(result.status == 0, "\(result)")
            #expect(listing(m.root) == ["keep.md"])
            #expect(fileRecordCount(m.database) == 1)
            #expect(m.database.queryMetadata(Query(recordType: Folder.recordType)).isEmpty)
        }
    }

    @Test(.tags(.mount), .needsFUSE) func echoAppendKeepsTheNote() throws {
        try withNotesMount { m in
            #expect(writeFile(m.path("e.md"), "line 1\n") == 0)
            let name = try #require(recordName(m.path("e.md")))
            let result = try sh("echo 'line 2' >> e.md && echo 'line 3' >> e.md", in: m.root)
            #expect(result.status == 0, "\(result)")
            expectNote(m, "e.md", recordName: name, text: "line 1\nline 2\nline 3\n", fileRecords: 1)
        }
    }

    @Test(.tags(.mount), .needsFUSE) func findAndGrepSeeEverything() throws {
        try withNotesMount { m in
            let make = try sh(
                "mkdir -p x/y z && for i in 1 2 3 4 5; do echo note $i > x/n$i.md; echo other > x/y/o$i.md; done && echo 'a needle here' > z/hay.md",
                in: m.root)
            #expect(make.status == 0, "\(make)")
            let find = try sh("find . -type f | wc -l", in: m.root)
            #expect(find.out.trimmingCharacters(in: .whitespacesAndNewlines) == "11")
            let dirs = try sh("find . -mindepth 1 -type d | wc -l", in: m.root)
            #expect(dirs.out.trimmingCharacters(in: .whitespacesAndNewlines) == "3")
            let grep = try sh("grep -rl needle .", in: m.root)
            #expect(grep.status == 0, "\(grep)")
            #expect(grep.out == "./z/hay.md\n")
            let count = try sh("grep -rc note . | grep -c ':1$'", in: m.root)
            #expect(count.out.trimmingCharacters(in: .whitespacesAndNewlines) == "5")
        }
    }

    @Test(.tags(.mount), .needsFUSE) func rsyncTwiceSecondRunChangesNothing() throws {
        try withNotesMount { m in
            let outside = makeTemporaryDirectory("notesfsrsync")
            defer { try? FileManager.default.removeItem(atPath: outside) }
            let make = try sh(
                "mkdir -p src/a/b && echo top > src/top.md && echo deep > src/a/b/deep.md && head -c 2000 /dev/urandom > src/a/data.bin && chmod 640 src/top.md",
                in: outside)
            #expect(make.status == 0, "\(make)")
            let first = try sh("rsync -a \(shellQuoted(outside))/src/ \(shellQuoted(m.root))/dst/")
            #expect(first.status == 0, "\(first)")
            #expect(readFile(m.path("dst/a/b/deep.md")) == "deep\n")
            let name = try #require(recordName(m.path("dst/top.md")))
            #expect(fileRecordCount(m.database) == 3)
            let second = try sh("rsync -a --itemize-changes \(shellQuoted(outside))/src/ \(shellQuoted(m.root))/dst/")
            #expect(second.status == 0, "\(second)")
            #expect(second.out == "", "the second rsync found differences")
            #expect(recordName(m.path("dst/top.md")) == name)
            let diff = try sh("diff -r \(shellQuoted(outside))/src \(shellQuoted(m.root))/dst")
            #expect(diff.status == 0, "\(diff)")
            // A changed source file is updated in place of the same record.
            #expect(writeFile(outside + "/src/top.md", "top, changed\n", mode: 0o640) == 0)
            let third = try sh("rsync -a \(shellQuoted(outside))/src/ \(shellQuoted(m.root))/dst/")
            #expect(third.status == 0, "\(third)")
            expectNote(m, "dst/top.md", recordName: name, text: "top, changed\n", fileRecords: 3)
        }
    }
}

/// JetBrains IDEs' safe write, replayed with its exact names and system calls: write
/// `x.md___jb_tmp___`, rename `x.md` to `x.md___jb_old___`, rename the temp to `x.md`, delete the old.
@Suite struct JetBrainsSafeWriteTests {
    @Test(.tags(.mount), .needsFUSE) func safeWriteKeepsTheNotesIdentity() throws {
        try withDatabaseDirectory { db in
            var name = ""
            try withNotesMount(databasePath: db) { m in
                #expect(writeFile(m.path("x.md"), "first\n") == 0)
                name = try #require(recordName(m.path("x.md")))
                for round in 1...3 {
                    let text = "saved by the IDE, round \(round)\n"
                    #expect(writeFile(m.path("x.md___jb_tmp___"), text) == 0)
                    #expect(rename(m.path("x.md"), m.path("x.md___jb_old___")) == 0)
                    #expect(rename(m.path("x.md___jb_tmp___"), m.path("x.md")) == 0)
                    #expect(unlink(m.path("x.md___jb_old___")) == 0)
                    expectNote(m, "x.md", recordName: name, text: text, fileRecords: 1)
                    #expect(listing(m.root) == ["x.md"], "no scratch file left")
                }
            }
            // After unmount: one note, the same record, and a clean check.
            let database = try RecordDatabase(path: db)
            #expect(notes(database).map(\.recordID.recordName) == [name])
            #expect(note(database, recordName: name)?.text == "saved by the IDE, round 3\n")
            #expect(try database.check().problems.isEmpty)
        }
    }

    /// The same save while a descriptor that wrote the note is still open (clean after its
    /// `fsync`; a `close` whose release the kernel has not sent yet is the same): afterwards the
    /// file has the IDE's size and bytes for every new open, not the old descriptor's. (Its
    /// buffer used to stand for the file: `stat` gave the old size, reads the old text, or the new
    /// text cut to the old size.)
    @Test(.tags(.mount), .needsFUSE) func safeWriteWhileAnOldDescriptorIsOpen() throws {
        try withNotesMount { m in
            let fd = open(m.path("x.md"), O_WRONLY | O_CREAT, 0o644)
            #expect(fd >= 0)
            defer { close(fd) }
            #expect(write(fd, "first\n", 6) == 6)
            #expect(fsync(fd) == 0)
            let name = try #require(recordName(m.path("x.md")))
            let text = "saved by the IDE while a descriptor was open\n"
            #expect(writeFile(m.path("x.md___jb_tmp___"), text) == 0)
            #expect(rename(m.path("x.md"), m.path("x.md___jb_old___")) == 0)
            #expect(rename(m.path("x.md___jb_tmp___"), m.path("x.md")) == 0)
            #expect(unlink(m.path("x.md___jb_old___")) == 0)
            #expect(statOf(m.path("x.md")).0?.st_size == off_t(text.utf8.count))
            expectNote(m, "x.md", recordName: name, text: text, fileRecords: 1)
            #expect(close(fd) == 0)
            #expect(readFile(m.path("x.md")) == text, "the old descriptor's close saved nothing over it")
        }
    }
}
