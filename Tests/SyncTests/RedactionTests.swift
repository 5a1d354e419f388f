import Foundation
import Postgres
import Sync
import TestSupport
import Testing

/// No form of a server string libpq accepts has its password printed: `sync init`, `sync status`
/// and the "already syncs with another server" error go through ``ConnectionString/redacted(_:)``.
@Suite struct RedactionTests {
    @Test(arguments: [
        ("postgresql://u:secret@host/db", "secret"),
        ("postgres://u:s%20ecret@host:5433/db?sslmode=require", "s ecret"),
        ("postgresql://u@host/db?password=secret", "secret"),
        (#"host=h password='a\' secret' dbname=d"#, "a' secret"),
        ("host=h password = secret dbname=d", "secret"),
        (#"password=se\cret host=h"#, #"se\cret"#),
    ])
    func aPasswordIsNeverShown(_ server: String, _ password: String) {
        let shown = ConnectionString.redacted(server)
        #expect(!shown.contains(password), "\(shown)")
        #expect(!shown.contains("secret") && !shown.contains("ecret"), "\(shown)")
        #expect(shown.contains("password=***"), "\(shown)")
        #expect(shown.contains("host=h") || shown.contains("host=host"), "\(shown)")
    }

    @Test func whatIsNotSecretStaysReadable() {
        #expect(ConnectionString.redacted("postgresql://u@host:5433/notes") == "user=u dbname=notes host=host port=5433")
        #expect(ConnectionString.redacted("host='/run/my pg' dbname=n") == "dbname=n host='/run/my pg'")
        #expect(ConnectionString.redacted("host=h password") == "(a server string libpq cannot parse)")
    }

    @Test(.tags(.postgres), .needsPostgres) func syncInitAndStatusPrintNoPassword() throws {
        let server = try cluster().makeDatabase()
        let db = NSTemporaryDirectory() + "notesfs-redact-" + UUID().uuidString + "/db"
        try FileManager.default.createDirectory(atPath: (db as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let initialize = try notesfs(db, ["sync", "init", server, "--no-encryption"])
        #expect(initialize.status == 0)
        let status = try notesfs(db, ["sync", "status"])
        let other = try notesfs(db, ["sync", "init", server + " application_name=x", "--no-encryption"])
        #expect(other.status != 0)
        for text in [initialize.out, initialize.stderr, status.out, status.stderr, other.out, other.stderr] {
            #expect(!text.contains(TestCluster.password), "\(text)")
        }
        #expect(other.stderr.contains("already syncs with another server ("), "\(other.stderr)")
    }
}

/// Passwords in what libpq hands back, and where the password is kept.
@Suite struct PasswordKeepingTests {
    @Test(arguments: [
        "postgresql://alice:S3cretPW@[bad/postgres", "postgresql://alice:S3cretPW@/nonexistent-db?host=/nonexistent",
        "host=/nonexistent password=S3cretPW dbname='unclosed", "host=/nonexistent password=S3cretPW dbname=x",
    ])
    func aPasswordIsNotInAnyErrorOfSyncInit(_ server: String) throws {
        let db = NSTemporaryDirectory() + "notesfs-redact-" + UUID().uuidString + "/db"
        try FileManager.default.createDirectory(atPath: (db as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let run = try notesfs(db, ["sync", "init", server, "--no-encryption"])
        #expect(run.status != 0)
        #expect(!run.stderr.isEmpty)
        #expect(!run.out.contains("S3cretPW") && !run.stderr.contains("S3cretPW"), "\(run.stderr)")
    }

    @Test(.tags(.postgres), .needsPostgres) func thePasswordIsKeptOutOfStateJson() throws {
        let server = try cluster().makeDatabase()
        #expect(server.contains(TestCluster.password))
        let db = NSTemporaryDirectory() + "notesfs-redact-" + UUID().uuidString + "/db"
        try FileManager.default.createDirectory(atPath: (db as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        #expect(try notesfs(db, ["sync", "init", server, "--no-encryption"]).status == 0)
        let state = try String(contentsOfFile: SyncState.path(forDatabase: db), encoding: .utf8)
        #expect(!state.contains(TestCluster.password), "\(state)")
        let secret = db + "/sync/password"
        let attributes = try FileManager.default.attributesOfItem(atPath: secret)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let sync = try notesfs(db, ["sync"])
        #expect(sync.status == 0, "\(sync.stderr)")
        // The same server again is the same server.
        #expect(try notesfs(db, ["sync", "init", server, "--no-encryption"]).status == 0)
    }
}
