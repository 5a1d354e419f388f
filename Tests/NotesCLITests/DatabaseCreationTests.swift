/// Where a database is created, with what mode, and what the mount says of a
/// missing one.

import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

@Suite struct DatabaseCreationTests {
    private func mode(_ path: String) -> mode_t? {
        var st = stat()
        return stat(path, &st) == 0 ? st.st_mode & 0o7777 : nil
    }

    /// `cd DIRECTORY && notesfs ARGS...` through the shell.
    private func notesfsIn(_ directory: String, _ arguments: [String]) throws -> ProgramResult {
        try run("/bin/sh", ["-c", "cd \"$1\" && shift && exec \"$@\"", "sh", directory, notesfsBinary] + arguments)
    }

    @Test func aRelativeDatabaseIsCreatedUnderTheWorkingDirectory() throws {
        let scratch = makeTemporaryDirectory("relative-db")
        let created = try notesfsIn(scratch, ["--db", "db", "folder", "new", "X"])
        #expect(created.status == 0, "\(created.stderr)")
        #expect(mode(scratch + "/db/notesfs.json") != nil)
        let nested = try notesfsIn(scratch, ["--db", "a/b/db", "folder", "new", "X"])
        #expect(nested.status == 0, "\(nested.stderr)")
        #expect(try notesfsIn(scratch, ["--db", "a/b/db", "folder", "ls"]).out == "X/\n")
    }

    @Test func aParentThatCannotBeMadeIsReportedWithTheRealError() throws {
        let scratch = makeTemporaryDirectory("blocked-db")
        try #require(FileManager.default.createFile(atPath: scratch + "/file", contents: Data()))
        let result = try notesfs(["folder", "new", "X"], db: scratch + "/file/sub/db")
        #expect(result.status == 5)
        #expect(result.stderr == "notesfs: \(scratch)/file: mkdir: Not a directory\n")
    }

    @Test func aNewDatabaseInAnEmptyDirectoryIsPrivate() throws {
        let db = makeTemporaryDirectory("empty-db") + "/db"
        try #require(mkdir(db, 0o755) == 0 && chmod(db, 0o755) == 0)
        #expect(try notesfs(["folder", "new", "X"], db: db).status == 0)
        #expect(mode(db) == 0o700)
        let fsck = try notesfs(["fsck"], db: db)
        #expect(fsck.status == 0, "\(fsck.out)")
    }

    @Test func anExistingDatabaseKeepsItsMode() throws {
        let db = makeDatabasePath("existing-db")
        #expect(try notesfs(["folder", "new", "X"], db: db).status == 0)
        try #require(chmod(db, 0o750) == 0)
        #expect(try notesfs(["folder", "new", "Y"], db: db).status == 0)
        #expect(mode(db) == 0o750)
        #expect(try notesfs(["fsck"], db: db).status == 4)
    }

    @Test func mountOfAMissingDatabaseSaysHowToStartOne() throws {
        let scratch = makeTemporaryDirectory("mount-missing")
        let result = try run(notesfsBinary, [scratch + "/nodb", scratch, "-f"])
        #expect(result.status == 6)
        #expect(
            result.stderr.contains("no such directory (to mount a new database, create an empty directory first: mkdir \(scratch)/nodb)"),
            "\(result.stderr)")
        #expect(mode(scratch + "/nodb") == nil)
        let help = try notesfs(["--help"], db: nil).out
        #expect(help.contains("A DB given to the mount must exist"))
    }
}
