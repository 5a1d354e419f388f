import Foundation
import Sync
import TestSupport
import Testing

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// `notesfs sync init URL`, `notesfs sync`, `notesfs sync status [--json]`, run as the built binary.
@Suite struct SyncCommandTests {
    func makeDatabasePath() -> String { NSTemporaryDirectory() + "notesfs-sync-cli-" + UUID().uuidString + "/db" }

    @Test(.tags(.postgres), .needsPostgres) func twoDatabasesSyncThroughTheCommands() throws {
        let server = try cluster().makeDatabase()
        let (a, b) = (makeDatabasePath(), makeDatabasePath())
        try FileManager.default.createDirectory(atPath: (a as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: (b as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        for db in [a, b] { #expect(try notesfs(db, ["sync", "init", server, "--no-encryption"]).status == 0) }
        #expect(try notesfs(a, ["folder", "new", "Work"]).status == 0)
        #expect(try notesfs(a, ["note", "new", "Work/Plan"], stdin: "line one\n").status == 0)

        let pending = try notesfs(a, ["--json", "sync", "status"])
        let json = try JSONSerialization.jsonObject(with: Data(pending.out.utf8)) as? [String: Any]
        #expect(json?["pendingChanges"] as? Int == 2)
        #expect((json?["server"] as? String)?.contains(TestCluster.password) == false)

        for db in [a, b, a] { #expect(try notesfs(db, ["sync"]).status == 0) }
        #expect(try notesfs(b, ["note", "cat", "Work/Plan"]).out == "line one\n")
        let status = try notesfs(a, ["sync", "status"])
        #expect(status.out.contains("pending changes: 0"))
        #expect(!status.out.contains("last sync: never"))
        #expect(try notesfs(a, ["fsck"]).status == 0)
    }

    @Test(.tags(.postgres), .needsPostgres) func aWrongPasswordIsReportedBySyncAndStatus() throws {
        let db = makeDatabasePath()
        try FileManager.default.createDirectory(atPath: (db as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let good = try cluster().makeDatabase()
        #expect(try notesfs(db, ["sync", "init", good, "--no-encryption"]).status == 0)
        // The password changes on the server: this machine's saved one is now wrong.
        let name = good.split(separator: " ").first { $0.hasPrefix("dbname=") }!.dropFirst("dbname=".count)
        try "wrong".write(toFile: SyncState.passwordPath(forDatabase: db), atomically: true, encoding: .utf8)
        let sync = try notesfs(db, ["sync"])
        #expect(sync.status == 5)
        #expect(sync.stderr.contains("password authentication failed"))
        #expect(name.hasPrefix("t_"))
        let status = try notesfs(db, ["sync", "status"])
        #expect(status.out.contains("last error: server: "))
        #expect(status.out.contains("password authentication failed"))
    }

    @Test func syncWithoutInitSaysWhatToDo() throws {
        let db = makeDatabasePath()
        try FileManager.default.createDirectory(atPath: (db as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        #expect(try notesfs(db, ["folder", "new", "X"]).status == 0)
        let run = try notesfs(db, ["sync"])
        #expect(run.status == 2)
        #expect(run.stderr.contains("sync init"))
    }

    @Test(.tags(.postgres), .needsPostgres) func syncWatchPicksUpAnotherMachinesPush() throws {
        let server = try cluster().makeDatabase()
        let (a, b) = (makeDatabasePath(), makeDatabasePath())
        for db in [a, b] {
            try FileManager.default.createDirectory(atPath: (db as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            #expect(try notesfs(db, ["sync", "init", server, "--no-encryption"]).status == 0)
        }
        let watch = try startNotesfs(a, ["sync", "--watch"])
        defer {
            // SIGKILL: a child of the test runner inherits its mask, in which SIGTERM is blocked.
            kill(watch.processIdentifier, SIGKILL)
            watch.waitUntilExit()
        }
        #expect(try notesfs(b, ["note", "new", "From B"], stdin: "pushed by b\n").status == 0)
        #expect(try notesfs(b, ["sync"]).status == 0)
        #expect(eventually { (try? notesfs(a, ["note", "cat", "From B"]))?.out == "pushed by b\n" })
        // And a local change under the watch is pushed without another command.
        #expect(try notesfs(a, ["note", "new", "From A"], stdin: "pushed by the watch\n").status == 0)
        #expect(
            eventually {
                _ = try? notesfs(b, ["sync"])
                return (try? notesfs(b, ["note", "cat", "From A"]))?.out == "pushed by the watch\n"
            })
        #expect(watch.isRunning)
    }
}
