/// The mount's virtual, read-only directories `.recent` and `.search`, through a real
/// mount: what they list, where their links point, that they are read-only, and that a listing
/// is never stale after a change made here or by another process.

import CFuse
import FUSE
import Foundation
import Glibc
import Notes
import RecordStore
import TestSupport
import Testing

@testable import NotesFS

/// `readlink(2)`; nil on error.
func linkTarget(_ path: String) -> String? {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX))
    let count = readlink(path, &buffer, buffer.count)
    guard count >= 0 else { return nil }
    return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// `lstat(2)`; nil on error.
private func lstatOf(_ path: String) -> stat? {
    var st = stat()
    return lstat(path, &st) == 0 ? st : nil
}

@discardableResult
private func saveNote(_ database: RecordDatabase, _ title: String, _ text: String, in folder: RecordID? = nil, modified: Date? = nil)
    throws -> Note
{
    var record = Note(title: title, text: text, folder: folder).record
    if let modified { record.modificationDate = modified }
    return try Note(record: database.modify(saving: [record]).savedRecords[0])
}

@Suite(.tags(.mount), .needsFUSE) struct VirtualDirectoryTests {
    @Test func recentListsTheFiftyNewestNotesNewestFirst() throws {
        let base = Date(timeIntervalSince1970: 1_700_000_000)
        // Created in a shuffled order, so that creation order says nothing about modification order.
        let order = Array(0..<60).shuffled()
        try withNotesMount(seed: { db in
            let folder = try saveFolder(db, name: "Work")
            for i in order {
                try saveNote(db, "n\(i)", "text \(i)", in: i % 2 == 0 ? folder.recordID : nil, modified: base + Double(i) * 60)
            }
        }) { m in
            let newest = (10..<60).reversed().map { "n\($0).md" }
            #expect(listing(m.path(".recent")) == newest.sorted())
            #expect(rawListing(m.path(".recent")) == newest, "readdir lists them newest first")
            let byTime = try sh("ls -t \(shellQuoted(m.path(".recent")))")
            #expect(byTime.out.split(separator: "\n").map(String.init) == newest)
            // A link: lrwxrwxrwx, its size the target's length, its mtime the note's modificationDate.
            let st = try #require(lstatOf(m.path(".recent/n59.md")))
            #expect(st.st_mode & S_IFMT == S_IFLNK)
            #expect(st.st_mode & 0o7777 == 0o777)
            #expect(linkTarget(m.path(".recent/n59.md")) == "../n59.md")
            #expect(linkTarget(m.path(".recent/n58.md")) == "../Work/n58.md")
            #expect(st.st_size == "../n59.md".utf8.count)
            #expect(st.st_mtim.tv_sec == Int(base.timeIntervalSince1970) + 59 * 60)
            #expect(readFile(m.path(".recent/n58.md")) == "text 58")
            #expect(statOf(m.path(".recent/n9.md")).1 == ENOENT)
        }
    }

    @Test func theRootNeverListsThemButLookupFindsThem() throws {
        try withNotesMount(seed: { db in try saveNote(db, "plain", "milk") }) { m in
            #expect(listing(m.root) == ["plain.md"])
            let all = try sh("ls -a \(shellQuoted(m.root))")
            #expect(all.out.split(separator: "\n").map(String.init) == [".", "..", "plain.md"])
            for name in [".recent", ".search"] {
                let st = try #require(lstatOf(m.path(name)))
                #expect(st.st_mode & S_IFMT == S_IFDIR)
                #expect(st.st_mode & 0o7777 == 0o555)
                #expect(st.st_uid == getuid())
            }
            #expect(try sh("cd \(shellQuoted(m.path(".search"))) && pwd").out == m.path(".search") + "\n")
            #expect(try sh("cd \(shellQuoted(m.path(".search/milk"))) && ls").out == "plain.md\n")
            // `.search` itself lists nothing; every name below it is a query directory.
            #expect(listing(m.path(".search")) == [])
            #expect(listing(m.path(".search/nothing matches this")) == [])
            #expect(statOf(m.path(".recent/absent.md")).1 == ENOENT)
            #expect(statOf(m.path(".search/milk/absent.md")).1 == ENOENT)
            #expect(statOf(m.path(".search/milk/plain.md/below")).1 == ENOTDIR)
            #expect(try sh("find \(shellQuoted(m.root))").out.contains(".search") == false)
        }
    }

    @Test func searchLinksToNotesAndAttachmentsThatEditTheRealNote() throws {
        try withNotesMount(seed: { db in
            let home = try saveFolder(db, name: "Home")
            try saveNote(db, "Groceries", "Milk and bread\n", in: home.recordID)
            try saveNote(db, "Only milk", "milk", in: home.recordID)
            let attachment = Attachment(name: "bread recipe.pdf", content: nil, folder: home.recordID)
            try db.modify(saving: [attachment.record])
        }) { m in
            let query = m.path(".search/milk bread")
            #expect(listing(query) == ["Groceries.md"])
            #expect(linkTarget(query + "/Groceries.md") == "../../Home/Groceries.md")
            #expect(readFile(query + "/Groceries.md") == "Milk and bread\n")
            let link = shellQuoted(query + "/Groceries.md")
            let cat = try sh("cat \(link)")
            #expect(cat.out == "Milk and bread\n")
            // An attachment is found by its name.
            #expect(listing(m.path(".search/RECIPE")) == ["bread recipe.pdf"])
            #expect(linkTarget(m.path(".search/RECIPE/bread recipe.pdf")) == "../../Home/bread recipe.pdf")
            #expect(listing(m.path(".search/bread")) == ["Groceries.md", "bread recipe.pdf"])
            // Writing through the link edits the real note.
            #expect(writeFile(query + "/Groceries.md", "Milk, bread, eggs\n") == 0)
            #expect(readFile(m.path("Home/Groceries.md")) == "Milk, bread, eggs\n")
            #expect(note(m.database, titled: "Groceries")?.text == "Milk, bread, eggs\n")
            #expect(listing(m.path("Home")) == ["Groceries.md", "Only milk.md", "bread recipe.pdf"])
            let appended = try sh("echo more >> \(link)")
            #expect(appended.status == 0)
            #expect(note(m.database, titled: "Groceries")?.text == "Milk, bread, eggs\nmore\n")
            #expect(fileRecordCount(m.database) == 3)
        }
    }

    @Test func vimThroughALinkEditsTheRealNote() throws {
        try withNotesMount(seed: { db in
            let work = try saveFolder(db, name: "Work")
            try saveNote(db, "Plan", "the plan\n", in: work.recordID)
        }) { m in
            let name = try #require(recordName(m.path("Work/Plan.md")))
            let home = makeTemporaryDirectory("notesfsvimhome")
            defer { try? FileManager.default.removeItem(atPath: home) }
            for (link, line) in [(".search/plan/Plan.md", "from search"), (".recent/Plan.md", "from recent")] {
                let result = try sh(
                    "vim -u DEFAULTS -i NONE -es -c 'normal Go\(line)' -c wq \(shellQuoted(link))", in: m.root,
                    environment: ["HOME": home, "TERM": "dumb"])
                #expect(result.status == 0, "\(result)")
                #expect(lstatOf(m.path(link)).map { $0.st_mode & S_IFMT } == S_IFLNK, "the link is still a link")
            }
            #expect(readFile(m.path("Work/Plan.md")) == "the plan\nfrom search\nfrom recent\n")
            #expect(recordName(m.path("Work/Plan.md")) == name, "the same note, edited")
            #expect(fileRecordCount(m.database) == 1)
            #expect(listing(m.path("Work")) == ["Plan.md"], "no swap or backup file left")
        }
    }

    @Test func queriesWithSpacesUnicodeAndDiacritics() throws {
        try withNotesMount(seed: { db in
            try saveNote(db, "Crème brûlée", "Zucker und Sahne")
            try saveNote(db, "日本語のメモ", "東京 で")
        }) { m in
            #expect(listing(m.path(".search/creme BRULEE")) == ["Crème brûlée.md"])
            #expect(listing(m.path(".search/zucker   sahne")) == ["Crème brûlée.md"])
            #expect(listing(m.path(".search/zucker milch")) == [])
            #expect(listing(m.path(".search/東京")) == ["日本語のメモ.md"])
            #expect(linkTarget(m.path(".search/東京/日本語のメモ.md")) == "../../日本語のメモ.md")
            #expect(readFile(m.path(".search/Crème/Crème brûlée.md")) == "Zucker und Sahne")
        }
    }

    @Test func aNoteInANestedFolderIsLinkedByItsWholePath() throws {
        try withNotesMount(seed: { db in
            let a = try saveFolder(db, name: "A")
            let b = try saveFolder(db, name: "B", parent: a.recordID)
            try saveNote(db, "N", "deep word", in: b.recordID)
        }) { m in
            #expect(linkTarget(m.path(".search/word/N.md")) == "../../A/B/N.md")
            #expect(linkTarget(m.path(".recent/N.md")) == "../A/B/N.md")
            #expect(readFile(m.path(".search/word/N.md")) == "deep word")
            // Moving the folder moves the target at once.
            #expect(rename(m.path("A/B"), m.path("B2")) == 0)
            #expect(linkTarget(m.path(".search/word/N.md")) == "../../B2/N.md")
            #expect(readFile(m.path(".recent/N.md")) == "deep word")
        }
    }

    @Test func hitsOfTheSameNameInDifferentFoldersGetTheirFolderInTheName() throws {
        try withNotesMount(seed: { db in
            let work = try saveFolder(db, name: "Work")
            let home = try saveFolder(db, name: "Home")
            let sub = try saveFolder(db, name: "Sub", parent: home.recordID)
            try saveNote(db, "Note", "alpha root")
            try saveNote(db, "Note", "alpha work", in: work.recordID)
            try saveNote(db, "Note", "alpha sub", in: sub.recordID)
            try saveNote(db, "Unique", "alpha", in: work.recordID)
        }) { m in
            let query = m.path(".search/alpha")
            #expect(listing(query) == ["Note (Home∕Sub).md", "Note (Work).md", "Note.md", "Unique.md"])
            #expect(linkTarget(query + "/Note.md") == "../../Note.md")
            #expect(linkTarget(query + "/Note (Work).md") == "../../Work/Note.md")
            #expect(linkTarget(query + "/Note (Home∕Sub).md") == "../../Home/Sub/Note.md")
            #expect(readFile(query + "/Note (Work).md") == "alpha work")
            #expect(readFile(query + "/Note (Home∕Sub).md") == "alpha sub")
            #expect(readFile(query + "/Note.md") == "alpha root")
        }
    }

    @Test func everyChangeInsideIsReadOnly() throws {
        try withNotesMount(seed: { db in
            try saveNote(db, "N", "word")
            try saveFolder(db, name: "Real")
        }) { m in
            let before = fileRecordCount(m.database)
            #expect(listing(m.path(".search/word")) == ["N.md"])
            for directory in [".recent", ".search/word"] {
                let dir = m.path(directory)
                #expect(errnoOf { open(dir + "/new.md", O_CREAT | O_WRONLY | O_CLOEXEC, 0o644) } == EROFS, "\(directory)")
                #expect(errnoOf { mkdir(dir + "/sub", 0o755) } == EROFS)
                #expect(errnoOf { unlink(dir + "/N.md") } == EROFS)
                #expect(renameErrno(dir + "/N.md", dir + "/M.md") == EROFS, "rename within")
                #expect(renameErrno(dir + "/N.md", m.path("M.md")) == EROFS, "rename out of")
                #expect(renameErrno(m.path("N.md"), dir + "/M.md") == EROFS, "rename into")
                #expect(renameErrno(m.path("Real"), dir + "/Real") == EROFS, "rename a folder into")
                #expect(errnoOf { symlink("N.md", dir + "/s") } == EROFS)
                #expect(errnoOf { link(dir + "/N.md", m.path("hard")) } == EROFS, "hard link of a virtual link")
                #expect(errnoOf { link(m.path("N.md"), dir + "/hard") } == EROFS, "hard link into")
                #expect(errnoOf { mkfifo(dir + "/fifo", 0o644) } == EROFS)
                #expect(errnoOf { chmod(dir, 0o777) } == EROFS, "setattr of the directory")
                var times = [timespec(tv_sec: 1, tv_nsec: 0), timespec(tv_sec: 1, tv_nsec: 0)]
                #expect(errnoOf { utimensat(AT_FDCWD, dir + "/N.md", &times, AT_SYMLINK_NOFOLLOW) } == EROFS, "setattr of a link")
                #expect(errnoOf { lchown(dir + "/N.md", 1, 1) } == EROFS)
                #expect(errnoOf { setxattr(dir, "user.x", "v", 1, 0) } == EROFS)
                #expect(errnoOf { removexattr(dir, "user.x") } == EROFS)
                #expect(errnoOf { rmdir(dir) } == EROFS)
                // truncate(2) of a directory is the kernel's EISDIR; of a link it follows the link.
                #expect(errnoOf { truncate(dir, 0) } == EISDIR)
            }
            #expect(errnoOf { rmdir(m.path(".search")) } == EROFS)
            #expect(renameErrno(m.path(".recent"), m.path("elsewhere")) == EROFS)
            #expect(renameErrno(m.path("Real"), m.path(".recent")) == EROFS, "a folder renamed onto the tree's name")
            // `.search/ANY` exists (every name is a query), so mkdir there is EEXIST, as for any existing directory.
            #expect(errnoOf { mkdir(m.path(".search/new query"), 0o755) } == EEXIST)
            #expect(errnoOf { open(m.path(".recent/N.md"), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o644) } == EEXIST)
            #expect(listxattr(m.path(".recent"), nil, 0) == 0)
            #expect(xattr(m.path(".recent"), "user.notesfs.recordName") == nil)
            #expect(fileRecordCount(m.database) == before)
            #expect(listing(m.root) == ["N.md", "Real"])
            #expect(readFile(m.path("N.md")) == "word")
            // Truncating through a link truncates the real note, as it does for any symlink.
            #expect(errnoOf { truncate(m.path(".recent/N.md"), 2) } == 0)
            #expect(readFile(m.path("N.md")) == "wo")
        }
    }

    @Test func listingsFollowChangesMadeThroughTheMountAtOnce() throws {
        try withNotesMount(seed: { db in try saveNote(db, "first", "needle one") }) { m in
            let query = m.path(".search/needle")
            #expect(listing(query) == ["first.md"])
            #expect(rawListing(m.path(".recent")) == ["first.md"])
            // A new note, a rename and a delete show in the very next listing and lookup.
            #expect(writeFile(m.path("second.md"), "needle two") == 0)
            #expect(listing(query) == ["first.md", "second.md"])
            #expect(rawListing(m.path(".recent")) == ["second.md", "first.md"])
            #expect(rename(m.path("first.md"), m.path("renamed.md")) == 0)
            #expect(listing(query) == ["renamed.md", "second.md"])
            #expect(lstatOf(query + "/first.md") == nil)
            #expect(lstatOf(m.path(".recent/first.md")) == nil)
            #expect(linkTarget(query + "/renamed.md") == "../../renamed.md")
            // A save that drops the word drops the link; one that adds it adds it.
            #expect(writeFile(m.path("second.md"), "no more") == 0)
            #expect(listing(query) == ["renamed.md"])
            #expect(lstatOf(query + "/second.md") == nil)
            #expect(unlink(m.path("renamed.md")) == 0)
            #expect(listing(query) == [])
            #expect(writeFile(m.path("third.md"), "a needle again") == 0)
            #expect(listing(query) == ["third.md"])
            #expect(rawListing(m.path(".recent")) == ["third.md", "second.md"])
            // From inside the directory (its inode kept as the cwd) too.
            let inside = try sh("cd \(shellQuoted(query)) && ls && echo ' needle' >> ../../second.md && ls")
            #expect(inside.out == "third.md\nsecond.md\nthird.md\n")
        }
    }

    @Test func listingsFollowChangesMadeByAnotherProcess() throws {
        var doomed: RecordID?
        try withNotesMount(seed: { db in
            doomed = try saveNote(db, "doomed", "shared word").recordID
            try saveNote(db, "kept", "shared word")
        }) { m in
            let query = m.path(".search/shared")
            #expect(listing(query) == ["doomed.md", "kept.md"])
            #expect(readFile(query + "/doomed.md") == "shared word")
            #expect(listing(m.path(".recent")) == ["doomed.md", "kept.md"])
            #expect(lstatOf(query + "/doomed.md") != nil)
            #expect(lstatOf(m.path(".recent/doomed.md")) != nil)
            let other = try openDatabase(m.databasePath)
            defer { try? other.close() }
            try other.modify(deleting: [try #require(doomed)])
            #expect(eventually(5) { listing(query) == ["kept.md"] }, "still listed: \(listing(query) ?? [])")
            #expect(lstatOf(query + "/doomed.md") == nil)
            #expect(lstatOf(m.path(".recent/doomed.md")) == nil)
            #expect(listing(m.path(".recent")) == ["kept.md"])
            try saveNote(other, "fresh", "a shared word from elsewhere")
            #expect(eventually(5) { listing(query) == ["fresh.md", "kept.md"] }, "listed: \(listing(query) ?? [])")
            #expect(readFile(query + "/fresh.md") == "a shared word from elsewhere")
            #expect(rawListing(m.path(".recent"))?.first == "fresh.md")
        }
    }

    @Test func theCommandLineChangesWhatTheyList() throws {
        try withNotesMount(seed: { db in try saveNote(db, "cli", "via the command line") }) { m in
            let notesfs = notesfsBinary
            #expect(listing(m.path(".search/command")) == ["cli.md"])
            let removed = try run([notesfs, "--db", m.databasePath, "note", "rm", "cli"])
            #expect(removed.status == 0, "\(removed)")
            #expect(eventually(5) { listing(m.path(".search/command")) == [] })
            #expect(listing(m.path(".recent")) == [])
        }
    }

    @Test func aRealFolderNamedLikeATreeKeepsItsName() throws {
        var real: RecordID?
        try withNotesMount(seed: { db in
            real = try saveFolder(db, name: ".recent").recordID
            try saveNote(db, "inside", "word", in: real)
        }) { m in
            #expect(try sh("ls -a \(shellQuoted(m.root))").out == ".\n..\n.recent\n")
            #expect(listing(m.path(".recent")) == ["inside.md"])
            #expect(lstatOf(m.path(".recent/inside.md")).map { $0.st_mode & S_IFMT } == S_IFREG)
            #expect(writeFile(m.path(".recent/new.md"), "made in the real folder") == 0)
            #expect(listing(m.path(".recent")) == ["inside.md", "new.md"])
            // `.search` is still the virtual one, and links into the real `.recent`.
            #expect(linkTarget(m.path(".search/word/inside.md")) == "../../.recent/inside.md")
            #expect(readFile(m.path(".search/word/inside.md")) == "word")
            // When the real folder goes, the name is the virtual tree's again.
            let other = try openDatabase(m.databasePath)
            defer { try? other.close() }
            try other.modify(deleting: [try #require(real)])
            #expect(eventually(5) { lstatOf(m.path(".recent")).map { $0.st_mode & 0o777 } == 0o555 })
            #expect(listing(m.path(".recent")) == [])
            #expect(try sh("ls -a \(shellQuoted(m.root))").out == ".\n..\n")
        }
    }

    @Test func forgottenNodesLeaveTheTable() throws {
        try withNotesMount(seed: { db in
            for i in 0..<20 { try saveNote(db, "n\(i)", "word \(i)") }
        }) { m in
            for i in 0..<20 { #expect(listing(m.path(".search/\(i)"))?.isEmpty == false) }
            #expect(try sh("ls -lR \(shellQuoted(m.path(".recent"))) \(shellQuoted(m.path(".search/word")))").status == 0)
            let held = m.fileSystem.state.withLock { $0.virtualNodes.nodes.count }
            #expect(held > 20)
            // Make the kernel drop its unused dentries and inodes: it forgets them here.
            let dropped = try sh("echo 2 > /proc/sys/vm/drop_caches")
            guard dropped.status == 0 else { return }  // not allowed here: nothing to check
            let released = eventually(5) { m.fileSystem.state.withLock { $0.virtualNodes.nodes.count } <= 2 }
            #expect(released, "still held: \(m.fileSystem.state.withLock { $0.virtualNodes.nodes.count })")
            // And lookups after that are counted again from nothing.
            #expect(listing(m.path(".search/word")).map(\.count) == 20)
            #expect(readFile(m.path(".search/word/n3.md")) == "word 3")
        }
    }
}
