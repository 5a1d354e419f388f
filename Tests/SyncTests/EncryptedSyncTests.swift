import Foundation
import Notes
import Postgres
import RecordStore
import TestSupport
import Testing

@testable import Sync

/// End-to-end encryption (issue 34): the server holds ciphertext, and what a hostile server does
/// to it (flips, truncates, swaps, replays, copies from another server, hands out another key or
/// absurd key parameters) is refused with its reason, local notes unchanged.
@Suite(.tags(.postgres), .needsPostgres) struct EncryptedSyncTests {
    static let passphrase = "correct horse battery staple"

    static func keys(_ passphrase: String = passphrase) -> SyncKeys {
        .passphrase { _ throws(SyncError) in Array(passphrase.utf8) }
    }

    /// A new machine (a database in its own directory) on `server`, after `sync init` with `keys`.
    static func machine(on server: String, keys: SyncKeys = keys()) throws -> (Machine, SyncSetup) {
        var template = Array((machinesDirectory + "/machine-XXXXXX").utf8CString)
        let directory = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
        let database = try RecordDatabase(path: directory + "/db", backgroundThread: false)
        let setup = try SyncEngine.initialize(database: database, server: server, keys: keys)
        return (Machine(database: database), setup)
    }

    /// `count` machines on one new encrypted server; the recovery key its first `sync init` printed.
    static func machines(_ count: Int) throws -> (server: String, machines: [Machine], recoveryKey: String) {
        let server = try cluster().makeDatabase()
        var machines: [Machine] = []
        var recovery: String?
        for _ in 0..<count {
            let (machine, setup) = try machine(on: server)
            #expect(setup.encrypted)
            recovery = recovery ?? setup.recoveryKey
            machines.append(machine)
        }
        return (server, machines, try #require(recovery))
    }

    /// The sealed bytes, seq and origin of the row of `recordName` (the server's copy, to put back).
    static func row(_ server: String, of recordName: String, cipher: RowCipher) throws -> (sealed: String, seq: String, origin: String) {
        let result = try Connection(server).execute(
            "SELECT encode(sealed, 'hex') AS sealed, seq, origin FROM notesfs_records WHERE record_name = $1",
            [try cipher.rowID(recordName)])
        return (try #require(result.value(0, "sealed")), try #require(result.value(0, "seq")), try #require(result.value(0, "origin")))
    }

    static func cipher(_ machine: Machine) throws -> RowCipher {
        RowCipher(key: try #require(try LocalKeyFile.load(databasePath: machine.path)))
    }

    @Test func theServerHoldsNoWordOfANoteNorItsName() throws {
        let (server, machines, _) = try Self.machines(2)
        let (a, b) = (machines[0], machines[1])
        let photo = Attachment(
            name: "platypus-holiday.raw", content: try a.database.makeAsset(Data("okapi bytes of a picture".utf8)),
            recordID: RecordID(recordName: "attachment-name-okapi"))
        try a.save([
            folder("Zanzibar Expedition", id: "folder-name-zanzibar"),
            note("Quixotic Marmalade", id: "note-name-quixotic", text: "the wombat sings at midnight", folder: "folder-name-zanzibar"),
            photo.record,
        ])
        try syncAll([a, b])
        #expect(try b.contents() == a.contents())
        #expect(try b.note("note-name-quixotic").text == "the wombat sings at midnight")

        let dump = try cluster().dump(server).lowercased()
        for word in [
            "zanzibar", "expedition", "quixotic", "marmalade", "wombat", "midnight", "platypus", "okapi", "folder-name", "note-name",
            "attachment-name",
        ] {
            #expect(!dump.contains(word), "pg_dump shows '\(word)'")
        }
        // Neither the types nor the SHA-256 of the attachment (the server cannot test for a known file).
        let types = try Connection(server).execute("SELECT DISTINCT record_type FROM notesfs_records").rows
        #expect(types == [[RowCipher.sealedType]])
        #expect(!dump.contains(SHA256.hexDigest(Data("okapi bytes of a picture".utf8))))
        let payloads = try Connection(server).execute("SELECT count(*) AS n FROM notesfs_records WHERE payload IS NOT NULL")
        #expect(payloads.value(0, "n") == "0")
    }

    @Test func aNewMachineJoinsWithThePassphraseOrTheRecoveryKeyAndAWrongOneChangesNothing() throws {
        let (server, machines, recovery) = try Self.machines(1)
        try machines[0].save([note("Kept", id: "kept", text: "hello")])
        try machines[0].sync()

        var template = Array((machinesDirectory + "/machine-XXXXXX").utf8CString)
        let directory = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
        let database = try RecordDatabase(path: directory + "/db", backgroundThread: false)
        #expect {
            try SyncEngine.initialize(database: database, server: server, keys: Self.keys("not the passphrase"))
        } throws: { error in
            "\(error)".contains("wrong passphrase") || "\(error)".contains("passphrase")
        }
        #expect(try SyncState.load(databasePath: database.path) == nil)
        #expect(try LocalKeyFile.load(databasePath: database.path) == nil)
        #expect(throws: SyncError.self) { try SyncEngine.initialize(database: database, server: server, keys: .readable) }
        #expect(try SyncState.load(databasePath: database.path) == nil)

        let setup = try SyncEngine.initialize(database: database, server: server, keys: .recoveryKey(recovery.lowercased()))
        #expect(setup.encrypted && setup.recoveryKey == nil)
        let joined = Machine(database: database)
        try joined.sync()
        #expect(try joined.note("kept").text == "hello")

        let (byPassphrase, _) = try Self.machine(on: server)
        try byPassphrase.sync()
        #expect(try byPassphrase.note("kept").text == "hello")
    }

    /// Runs `attack` on the server after `a` and `b` synced notes `one` and `two`; then `b` (when
    /// the attack moved the rows' seqs on, so that `b` fetches them) and a machine that joins
    /// afresh sync: each must set exactly the rows of `victims` aside, with a reason containing
    /// `reason`, keep its notes as they were, and still apply the untouched new note `three`.
    func expectRefused(
        victims: Set<String>, reason: String, seenByEarlierMachines: Bool = true,
        _ attack: (_ server: String, _ cipher: RowCipher) throws -> Void, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let (server, machines, _) = try Self.machines(2)
        let (a, b) = (machines[0], machines[1])
        try a.save([note("One", id: "one", text: "first text"), note("Two", id: "two", text: "second text")])
        try syncAll([a, b])
        let before = try b.contents()
        let cipher = try Self.cipher(a)
        try attack(server, cipher)
        try a.save([note("Three", id: "three", text: "third")])
        try a.sync()
        let report = try b.sync()
        let (fresh, _) = try Self.machine(on: server)
        let freshReport = try fresh.sync()
        let rows = Set(try victims.map { try cipher.rowID($0) })
        for (machine, report) in [(b, report), (fresh, freshReport)] where machine.path != b.path || seenByEarlierMachines {
            let refused = report.setAside.filter { $0.reason.contains(reason) }
            #expect(refused.count == victims.count, "set aside: \(report.setAside)", sourceLocation: sourceLocation)
            #expect(Set(refused.map(\.recordName)).isSubset(of: rows.union(victims)), sourceLocation: sourceLocation)
            #expect(try machine.note("three").text == "third", sourceLocation: sourceLocation)
        }
        var after = try b.contents()
        after["three"] = nil
        #expect(after == before, sourceLocation: sourceLocation)
        #expect(victims.allSatisfy { !fresh.has($0) }, sourceLocation: sourceLocation)
    }

    @Test func aFlippedByteOrATruncatedRowIsSetAside() throws {
        // Flipped in place (the seq kept): a machine that joins reads it.
        try expectRefused(victims: ["one"], reason: "does not open", seenByEarlierMachines: false) { server, cipher in
            try Connection(server).execute(
                "UPDATE notesfs_records SET sealed = set_byte(sealed, 40, get_byte(sealed, 40) # 1) WHERE record_name = $1",
                [try cipher.rowID("one")])
        }
        // Truncated and announced as a new change.
        try expectRefused(victims: ["two"], reason: "does not open") { server, cipher in
            try Connection(server).execute(
                "UPDATE notesfs_records SET sealed = substring(sealed FROM 1 FOR 40), seq = nextval('notesfs_seq') WHERE record_name = $1",
                [try cipher.rowID("two")])
        }
    }

    @Test func twoRowsSwappedAreSetAside() throws {
        try expectRefused(victims: ["one", "two"], reason: "does not open") { server, cipher in
            let (one, two) = (try cipher.rowID("one"), try cipher.rowID("two"))
            try Connection(server).execute(
                """
                UPDATE notesfs_records r SET sealed = o.sealed, seq = nextval('notesfs_seq')
                FROM notesfs_records o WHERE (r.record_name, o.record_name) IN (($1, $2), ($2, $1))
                """, [one, two])
        }
    }

    @Test func anOldVersionSentAgainIsSetAside() throws {
        let (server, machines, _) = try Self.machines(2)
        let (a, b) = (machines[0], machines[1])
        try a.save([note("Diary", id: "diary", text: "monday")])
        try syncAll([a, b])
        let old = try Self.row(server, of: "diary", cipher: Self.cipher(a))
        try a.append(", tuesday", to: "diary")
        try syncAll([a, b])
        #expect(try b.note("diary").text == "monday, tuesday")
        // The server puts last week's row back, as a new change (its seq moves on, as a push's does).
        try Connection(server).execute(
            "UPDATE notesfs_records SET sealed = decode($1, 'hex'), origin = $2, seq = nextval('notesfs_seq') WHERE record_name = $3",
            [old.sealed, old.origin, try Self.cipher(a).rowID("diary")])
        let report = try b.sync()
        #expect(report.setAside.map(\.recordName) == [try Self.cipher(a).rowID("diary")])
        #expect(report.setAside.first?.reason.contains("does not open") == true, "\(report.setAside)")
        #expect(try b.note("diary").text == "monday, tuesday")
    }

    @Test func aRowOfAnotherServerIsSetAsideAndItsKeyOpensNothing() throws {
        let (other, otherMachines, _) = try Self.machines(1)
        try otherMachines[0].save([note("Elsewhere", id: "one", text: "another vault's note")])
        try otherMachines[0].sync()
        let otherCipher = try Self.cipher(otherMachines[0])
        let copied = try Self.row(other, of: "one", cipher: otherCipher)
        try expectRefused(victims: ["one"], reason: "does not open") { server, cipher in
            // The other server's row of a note named alike, put in place of this server's (as a new change).
            try Connection(server).execute(
                "UPDATE notesfs_records SET sealed = decode($1, 'hex'), seq = nextval('notesfs_seq') WHERE record_name = $2",
                [copied.sealed, try cipher.rowID("one")])
        }
    }

    @Test func anotherServersWrappedKeyIsRefusedAndNothingIsPushed() throws {
        let (server, machines, _) = try Self.machines(1)
        let a = machines[0]
        try a.save([note("Mine", id: "mine", text: "mine")])
        try a.sync()
        let (other, _, _) = try Self.machines(1)  // the same passphrase, another server
        let theirs = try Connection(other).execute("SELECT kind, key_id, wrapped::text AS wrapped FROM notesfs_keys")
        try Connection(server).execute("DELETE FROM notesfs_keys")
        for row in theirs.rows.indices {
            try Connection(server).execute(
                "INSERT INTO notesfs_keys VALUES ($1, $2, $3::jsonb)",
                [theirs.value(row, "kind"), theirs.value(row, "key_id"), theirs.value(row, "wrapped")])
        }
        // A machine that holds the key refuses the server's other key, and pushes nothing.
        try a.save([note("Later", id: "later", text: "not to be pushed")])
        let rows = try serverRows(server).count
        #expect(throws: SyncError.self) { try a.sync() }
        #expect(try serverRows(server).count == rows)
        // A joining machine cannot open it with the passphrase: it is bound to the other server.
        var template = Array((machinesDirectory + "/machine-XXXXXX").utf8CString)
        let directory = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
        let database = try RecordDatabase(path: directory + "/db", backgroundThread: false)
        #expect(throws: SyncError.self) { try SyncEngine.initialize(database: database, server: server, keys: Self.keys()) }
        #expect(try SyncState.load(databasePath: database.path) == nil)
    }

    @Test func keyParametersThatWouldTakeHoursAreRefused() throws {
        let (server, _, _) = try Self.machines(1)
        try Connection(server).execute(
            "UPDATE notesfs_keys SET wrapped = jsonb_set(wrapped, '{kdf,n}', to_jsonb(1073741824::bigint)) WHERE kind = 'passphrase'")
        var template = Array((machinesDirectory + "/machine-XXXXXX").utf8CString)
        let directory = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
        let database = try RecordDatabase(path: directory + "/db", backgroundThread: false)
        #expect {
            try SyncEngine.initialize(database: database, server: server, keys: Self.keys())
        } throws: { error in
            "\(error)".contains("2^30") || "\(error)".contains("1073741824") || "\(error)".lowercased().contains("memory")
        }
        #expect(try SyncState.load(databasePath: database.path) == nil)
    }

    @Test func aReadableMachineStopsAtAnEncryptedServerAndPushesNothing() throws {
        let server = try cluster().makeDatabase()
        let (readable, _) = try Self.machine(on: server, keys: .readable)
        let (encrypted, setup) = try Self.machine(on: server)  // the server holds nothing yet: it is encrypted
        #expect(setup.encrypted)
        try encrypted.save([note("Secret", id: "secret", text: "sealed")])
        try encrypted.sync()
        try readable.save([note("Plain", id: "plain", text: "would be readable")])
        #expect {
            try readable.sync()
        } throws: { error in
            "\(error)".contains("encrypted")
        }
        #expect(try Connection(server).execute("SELECT count(*) AS n FROM notesfs_records WHERE payload IS NOT NULL").value(0, "n") == "0")
        // It joins with the passphrase, then syncs encrypted.
        try SyncEngine.initialize(database: readable.database, server: server, keys: Self.keys())
        try readable.sync()
        try encrypted.sync()
        #expect(try encrypted.note("plain").text == "would be readable")
        #expect(try readable.note("secret").text == "sealed")
    }

    /// A database that synced encrypted, moved to a new (or reset) server: it pushes nothing there
    /// until `sync init` wraps its key for that server with a passphrase; then everything goes up
    /// encrypted and a new machine joins with that passphrase.
    @Test func aDatabaseMovedToAnEmptyServerEncryptsItWithItsKey() throws {
        let (_, machines, _) = try Self.machines(1)
        let a = machines[0]
        try a.save([note("Moved", id: "moved", text: "along")])
        try a.sync()
        let keyID = try #require(try SyncState.load(databasePath: a.path)?.keyID)
        let fresh = try cluster().makeDatabase()
        try ServerSchema.install(on: Connection(fresh))  // as another machine's `sync init --no-encryption` would
        try SyncEngine.changeServer(database: a.database, to: fresh, allowingAnotherServer: true)
        #expect {
            try a.sync()
        } throws: { error in
            "\(error)".contains("holds no key")
        }
        #expect(try serverRows(fresh).isEmpty)
        let setup = try SyncEngine.initialize(database: a.database, server: fresh, keys: Self.keys("the passphrase there"))
        #expect(setup.state.keyID == keyID && setup.recoveryKey != nil)
        try a.sync()
        #expect(try Connection(fresh).execute("SELECT count(*) AS n FROM notesfs_records WHERE sealed IS NULL").value(0, "n") == "0")
        let (b, _) = try Self.machine(on: fresh, keys: Self.keys("the passphrase there"))
        try b.sync()
        #expect(try b.note("moved").text == "along")
    }

    @Test func theCommandLineMakesJoinsAndRewrapsTheKey() throws {
        let server = try cluster().makeDatabase()
        let scratch = makeTemporaryDirectory("notesfs-e2ee")
        let (a, b, c) = (scratch + "/a", scratch + "/b", scratch + "/c")
        let passphraseFile = scratch + "/passphrase"
        try Data((Self.passphrase + "\n").utf8).write(to: URL(fileURLWithPath: passphraseFile))
        let made = try notesfs(a, ["sync", "init", server, "--passphrase-file", passphraseFile])
        #expect(made.status == 0, "\(made)")
        let recovery = try #require(made.lines.last)
        #expect(recovery.count > 40 && recovery.contains("-"), "\(made)")
        #expect(made.stderr.contains("end-to-end encrypted"))
        let recoveryFile = scratch + "/recovery"
        try Data(recovery.utf8).write(to: URL(fileURLWithPath: recoveryFile))
        #expect(try notesfs(b, ["sync", "init", server, "--recovery-key-file", recoveryFile]).status == 0)
        #expect(try notesfs(a, ["note", "new", "Alpha", "--text", "alpha text"]).status == 0)
        #expect(try notesfs(a, ["sync"]).status == 0)
        #expect(try notesfs(b, ["sync"]).status == 0)
        #expect(try notesfs(b, ["note", "cat", "Alpha"]).out == "alpha text")
        let status = try notesfs(b, ["sync", "status"])
        #expect(status.out.contains("encryption: end-to-end"), "\(status)")
        var mode = stat()
        #expect(stat(LocalKeyFile.path(databasePath: b), &mode) == 0 && mode.st_mode & 0o777 == 0o600)

        // A new passphrase: the old one no longer joins, the new one does; nothing is uploaded again.
        let newFile = scratch + "/new-passphrase"
        try Data("a brand new passphrase".utf8).write(to: URL(fileURLWithPath: newFile))
        let rows = try Connection(server).execute("SELECT seq FROM notesfs_records ORDER BY seq").rows
        let rewrapped = try notesfs(b, ["sync", "passphrase", "--passphrase-file", newFile])
        #expect(rewrapped.status == 0, "\(rewrapped)")
        #expect(try Connection(server).execute("SELECT seq FROM notesfs_records ORDER BY seq").rows == rows)
        let refused = try notesfs(c, ["sync", "init", server, "--passphrase-file", passphraseFile])
        #expect(refused.status != 0 && refused.stderr.contains("passphrase"), "\(refused)")
        #expect(!FileManager.default.fileExists(atPath: SyncState.path(forDatabase: c)))
        #expect(try notesfs(c, ["sync", "init", server, "--passphrase-file", newFile]).status == 0)
        #expect(try notesfs(c, ["sync"]).status == 0)
        #expect(try notesfs(c, ["note", "cat", "Alpha"]).out == "alpha text")
    }
}
