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
        let database = try makeMachineDatabase()
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

        let database = try makeMachineDatabase()
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
        let database = try makeMachineDatabase()
        #expect(throws: SyncError.self) { try SyncEngine.initialize(database: database, server: server, keys: Self.keys()) }
        #expect(try SyncState.load(databasePath: database.path) == nil)
    }

    @Test func keyParametersThatWouldTakeHoursAreRefused() throws {
        let (server, _, _) = try Self.machines(1)
        try Connection(server).execute(
            "UPDATE notesfs_keys SET wrapped = jsonb_set(wrapped, '{kdf,n}', to_jsonb(1073741824::bigint)) WHERE kind = 'passphrase'")
        let database = try makeMachineDatabase()
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

    /// `sync encrypt` seals a readable server in use: no word of it stays readable, its own
    /// machine fetches nothing back, the other machine stops (pushing nothing) until it joins,
    /// then its edit made meanwhile reaches everyone, and a new machine gets it all, attachment too.
    @Test func aReadableServerIsEncryptedWhileAnotherMachineEdits() throws {
        let (server, machines) = try makeMachines(2)
        let (a, b) = (machines[0], machines[1])
        let bytes = (0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let photo = Attachment(
            name: "okapi-photo.raw", content: try a.database.makeAsset(Data(bytes)), recordID: RecordID(recordName: "okapi-id"))
        try a.save([
            folder("Zanzibar", id: "zanzibar-id"), note("Quixotic", id: "quixotic-id", text: "wombat text\n", folder: "zanzibar-id"),
            photo.record,
        ])
        try syncAll([a, b])
        try b.append("an edit made meanwhile\n", to: "quixotic-id")

        let setup = try SyncEngine.encryptServer(database: a.database, passphrase: Array(Self.passphrase.utf8))
        #expect(setup.encrypted && setup.recoveryKey != nil)
        let dump = try cluster().dump(server).lowercased()
        for word in ["zanzibar", "quixotic", "wombat", "okapi", SHA256.hexDigest(Data(bytes))] {
            #expect(!dump.contains(word), "pg_dump shows '\(word)'")
        }
        #expect(try Connection(server).execute("SELECT count(*) AS n FROM notesfs_records WHERE sealed IS NULL").value(0, "n") == "0")
        #expect(try a.sync().fetched == 0)

        let rows = try serverRows(server)
        #expect {
            try b.sync()
        } throws: { error in
            "\(error)".contains("encrypted")
        }
        #expect(try serverRows(server).mapValues(\.seq) == rows.mapValues(\.seq))
        try SyncEngine.initialize(database: b.database, server: server, keys: Self.keys())
        try b.sync()
        try a.sync()
        #expect(try a.note("quixotic-id").text == "wombat text\nan edit made meanwhile\n")
        #expect(try b.contents() == a.contents())
        let (c, _) = try Self.machine(on: server)
        try c.sync()
        #expect(try c.contents() == a.contents())
        let arrived = try Attachment(record: c.database.record(for: RecordID(recordName: "okapi-id")))
        #expect(try Data(contentsOf: URL(fileURLWithPath: c.database.assetPath(try #require(arrived.content)))) == Data(bytes))
    }

    /// `sync encrypt`, then `sync rotate-key`, killed while they hold the push lock, leave the
    /// server all readable or all sealed, all under the old key or all under the new one, never a
    /// mix; run again, they finish.
    @Test func aKilledEncryptionOrRotationLeavesTheServerWholeAndRunsAgain() throws {
        let (server, machines) = try makeMachines(1)
        let a = machines[0]
        try a.save((0..<1500).map { note("Note \($0)", id: "n\($0)", text: String(repeating: "filler text \($0) ", count: 60)) })
        try a.sync()
        let scratch = makeTemporaryDirectory("notesfs-encrypt-kill")
        let passphraseFile = scratch + "/passphrase"
        try Data(Self.passphrase.utf8).write(to: URL(fileURLWithPath: passphraseFile))
        func counts() throws -> (keys: String?, plain: String?, sealed: String?) {
            let result = try Connection(server).execute(
                """
                SELECT (SELECT count(*) FROM notesfs_keys) AS keys,
                    (SELECT count(*) FROM notesfs_records WHERE sealed IS NULL) AS plain,
                    (SELECT count(*) FROM notesfs_records WHERE sealed IS NOT NULL) AS sealed
                """)
            return (result.value(0, "keys"), result.value(0, "plain"), result.value(0, "sealed"))
        }
        /// How many rows open with `cipher`.
        func opening(_ cipher: RowCipher) throws -> Int {
            let connection = try Connection(server)
            let rows = try connection.execute("SELECT record_name, seq FROM notesfs_records")
            return try rows.rows.indices.filter { row in
                guard let name = rows.value(row, "record_name"), let seq = rows.value(row, "seq").flatMap({ Int64($0) }),
                    let sealed = try connection.fetchBytes("SELECT sealed FROM notesfs_records WHERE record_name = $1", [name]).first
                        ?? nil,
                    case .success = cipher.open(rowID: name, seq: seq, sealed: sealed)
                else { return false }
                return true
            }.count
        }
        var generator = SeededGenerator(state: 34)
        /// Runs `sync ACTION` three times, each killed at a random moment after it took the push lock;
        /// stops when `done()` says it committed.
        func kill(_ action: String, until done: () throws -> Bool, check: () throws -> Void) throws {
            for _ in 0..<3 {
                let child = try SpawnedProcess(
                    [notesfsBinary, "--db", a.path, "-q", "sync", action, "--passphrase-file", passphraseFile],
                    stdout: scratch + "/out", stderr: scratch + "/err")
                let watcher = try Connection(server)
                for _ in 0..<2000 where child.isRunning {
                    let held = try watcher.execute("SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND granted")
                    if held.value(0, "n") != "0" { break }
                    usleep(5000)
                }
                usleep(UInt32.random(in: 0...300_000, using: &generator))
                Glibc.kill(child.pid, SIGKILL)
                _ = child.wait()
                try check()
                if try done() { return }
            }
            let run = try notesfs(a.path, ["sync", action, "--passphrase-file", passphraseFile])
            #expect(run.status == 0, "\(run)")
        }

        try kill("encrypt", until: { try counts().keys == "2" }) {
            let found = try counts()
            let readable = found.keys == "0" && found.sealed == "0" && found.plain == "1500"
            let sealed = found.keys == "2" && found.plain == "0" && found.sealed == "1500"
            #expect(readable || sealed, "\(found)")
        }
        #expect(try counts().plain == "0")
        // A sync then joins this machine to the key (a kill after the commit left the state behind).
        if try SyncState.load(databasePath: a.path)?.keyID == nil || (try? LocalKeyFile.load(databasePath: a.path)) == nil {
            try SyncEngine.initialize(database: a.database, server: server, keys: Self.keys())
        }
        let old = try Self.cipher(a)
        #expect(try opening(old) == 1500)
        try kill("rotate-key", until: { try opening(old) == 0 }) {
            let opened = try opening(old)
            #expect(opened == 1500 || opened == 0, "\(opened) of 1,500 rows open with the old key")
        }
        #expect(try opening(old) == 0)
        let (b, _) = try Self.machine(on: server)
        try b.sync()
        #expect(try b.note("n1499").text.hasPrefix("filler text 1499"))
    }

    /// `sync rotate-key`: every row and the attachment sealed again under a new key, which opens
    /// them all while the old key opens none; the other machine (old key) can neither sync nor
    /// rotate, changing nothing, until it joins with the passphrase: then its edit made meanwhile
    /// arrives. The new recovery key joins; the old one does not.
    @Test func aRotatedKeyOpensEverythingAndTheOldOneNothing() throws {
        let (server, machines, oldRecovery) = try Self.machines(2)
        let (a, b) = (machines[0], machines[1])
        let bytes = (0..<((1 << 20) + 5)).map { UInt8(truncatingIfNeeded: $0 &* 13) }
        let photo = Attachment(
            name: "okapi.raw", content: try a.database.makeAsset(Data(bytes)), recordID: RecordID(recordName: "okapi-id"))
        try a.save([note("Diary", id: "diary", text: "monday\n"), photo.record])
        try syncAll([a, b])
        let oldCipher = try Self.cipher(a)
        try b.append("tuesday\n", to: "diary")

        let newPassphrase = "a passphrase after rotation"
        let setup = try SyncEngine.rotateKey(database: a.database, passphrase: Array(newPassphrase.utf8))
        let newCipher = try Self.cipher(a)
        #expect(newCipher.key.keyID != oldCipher.key.keyID && setup.state.keyID == newCipher.key.keyID)
        let connection = try Connection(server)
        let rows = try connection.execute("SELECT record_name, seq FROM notesfs_records")
        #expect(rows.rows.count >= 2)
        for row in rows.rows.indices {
            let name = try #require(rows.value(row, "record_name"))
            let seq = try #require(rows.value(row, "seq").flatMap { Int64($0) })
            let sealed = try #require(
                try connection.fetchBytes("SELECT sealed FROM notesfs_records WHERE record_name = $1", [name]).first ?? nil)
            if case .failure(let why) = newCipher.open(rowID: name, seq: seq, sealed: sealed) { Issue.record("\(why.reason)") }
            if case .success = oldCipher.open(rowID: name, seq: seq, sealed: sealed) { Issue.record("the old key opens \(name)") }
        }
        #expect(try a.sync().fetched == 0)

        let before = try serverRows(server)
        #expect(throws: SyncError.self) { try b.sync() }
        #expect(throws: SyncError.self) { try SyncEngine.rotateKey(database: b.database, passphrase: Array(Self.passphrase.utf8)) }
        #expect(try serverRows(server).mapValues(\.seq) == before.mapValues(\.seq))
        try SyncEngine.initialize(database: b.database, server: server, keys: Self.keys(newPassphrase))
        try b.sync()
        try a.sync()
        #expect(try a.note("diary").text == "monday\ntuesday\n")
        #expect(try b.contents() == a.contents())

        let database = try makeMachineDatabase()
        #expect(throws: SyncError.self) { try SyncEngine.initialize(database: database, server: server, keys: .recoveryKey(oldRecovery)) }
        try SyncEngine.initialize(database: database, server: server, keys: .recoveryKey(try #require(setup.recoveryKey)))
        let c = Machine(database: database)
        try c.sync()
        #expect(try c.contents() == a.contents())
        let arrived = try Attachment(record: c.database.record(for: RecordID(recordName: "okapi-id")))
        #expect(try Data(contentsOf: URL(fileURLWithPath: c.database.assetPath(try #require(arrived.content)))) == Data(bytes))
    }

    /// A mount whose database syncs encrypted but does not hold the key (removed here, as on a
    /// machine that has not joined yet): its edits go on locally, the log and `sync status` say
    /// why nothing syncs, and once the machine joins with the passphrase its edit reaches the server.
    @Test(.tags(.mount), .needsFUSE) func aMountWithoutTheKeyWorksLocallyAndSaysWhy() throws {
        let (server, machines, _) = try Self.machines(1)
        let a = machines[0]
        try a.save([note("Before", id: "before", text: "synced\n")])
        try a.sync()
        try LocalKeyFile.remove(databasePath: a.path)
        let rows = try serverRows(server)
        let mount = try syncedMount(a.path)
        defer { mount.close() }
        try Data("written without the key\n".utf8).write(to: URL(fileURLWithPath: mount.path + "/Local.md"))
        #expect(try String(contentsOfFile: mount.path + "/Local.md", encoding: .utf8) == "written without the key\n")
        #expect(eventually { mount.log.contains("key is not here") }, "\(mount.logTail)")
        let status = try notesfs(a.path, ["sync", "status"])
        #expect(status.out.contains("not on this machine") && status.out.contains("key is not here"), "\(status)")
        #expect(try serverRows(server).keys.sorted() == rows.keys.sorted())
        #expect(mount.unmount() == 0)
        try SyncEngine.initialize(database: a.database, server: server, keys: Self.keys())
        try a.sync()
        let (b, _) = try Self.machine(on: server)
        try b.sync()
        #expect(try b.notes().map(\.text).sorted() == ["synced\n", "written without the key\n"])
    }

    /// `sync init --ask-passphrase`: the machine keeps no key; each `sync` unlocks it with the
    /// passphrase (a wrong one syncs nothing and says so), and still keeps none.
    @Test func aMachineThatKeepsNoKeyUnlocksItAtEachSync() throws {
        let server = try cluster().makeDatabase()
        let scratch = makeTemporaryDirectory("notesfs-ask")
        let (a, b) = (scratch + "/a", scratch + "/b")
        let right = scratch + "/passphrase"
        let wrong = scratch + "/wrong"
        try Data(Self.passphrase.utf8).write(to: URL(fileURLWithPath: right))
        try Data("not the passphrase at all".utf8).write(to: URL(fileURLWithPath: wrong))
        #expect(try notesfs(a, ["sync", "init", server, "--passphrase-file", right]).status == 0)
        let joined = try notesfs(b, ["sync", "init", server, "--passphrase-file", right, "--ask-passphrase"])
        #expect(joined.status == 0, "\(joined)")
        #expect(!FileManager.default.fileExists(atPath: LocalKeyFile.path(databasePath: b)))
        #expect(try notesfs(a, ["note", "new", "Alpha", "--text", "alpha text"]).status == 0)
        #expect(try notesfs(a, ["sync"]).status == 0)
        let refused = try notesfs(b, ["sync", "--passphrase-file", wrong])
        #expect(refused.status != 0 && refused.stderr.contains("passphrase"), "\(refused)")
        #expect(try notesfs(b, ["note", "cat", "Alpha"]).status != 0)
        let synced = try notesfs(b, ["sync", "--passphrase-file", right])
        #expect(synced.status == 0, "\(synced)")
        #expect(try notesfs(b, ["note", "cat", "Alpha"]).out == "alpha text")
        #expect(!FileManager.default.fileExists(atPath: LocalKeyFile.path(databasePath: b)))
    }

    /// A crash after `rotate-key` kept the new key here but before the state named it: the state
    /// still names the old key, so the sync refuses; `sync init` with the passphrase heals it.
    @Test func aRotationCutBeforeTheStateIsHealedBySyncInit() throws {
        let (server, machines, _) = try Self.machines(1)
        let a = machines[0]
        try a.save([note("Kept", id: "kept", text: "kept\n")])
        try a.sync()
        let old = try #require(try SyncState.load(databasePath: a.path)?.keyID)
        try SyncEngine.rotateKey(database: a.database, passphrase: Array(Self.passphrase.utf8))
        var state = try #require(try SyncState.load(databasePath: a.path))
        state.keyID = old
        try state.save(databasePath: a.path)
        #expect(throws: SyncError.self) { try a.sync() }
        try SyncEngine.initialize(database: a.database, server: server, keys: Self.keys())
        #expect(try SyncState.load(databasePath: a.path)?.keyID == (try LocalKeyFile.load(databasePath: a.path))?.keyID)
        try a.append("after\n", to: "kept")
        try a.sync()
        let (b, _) = try Self.machine(on: server)
        try b.sync()
        #expect(try b.note("kept").text == "kept\nafter\n")
    }

    /// `sync encrypt` on a server whose asset table holds rows of no bytes (a size no asset has:
    /// the largest bigint, a negative one; a size whose chunks are missing): it neither stops nor
    /// traps, seals the rest, and leaves no readable SHA-256 behind.
    @Test func assetRowsWithoutBytesNeitherStopTheEncryptionNorStayReadable() throws {
        let (server, machines) = try makeMachines(1)
        let a = machines[0]
        try a.save([note("Plain", id: "plain", text: "plain\n")])
        try a.sync()
        let connection = try Connection(server)
        let made = ["a", "b", "c"].map { String(repeating: $0, count: 64) }
        try connection.execute(
            "INSERT INTO notesfs_assets (sha256, size) VALUES ($1, 9223372036854775807), ($2, -5), ($3, 10)", made.map { $0 })
        let scratch = makeTemporaryDirectory("notesfs-encrypt-hostile")
        try Data(Self.passphrase.utf8).write(to: URL(fileURLWithPath: scratch + "/passphrase"))
        let run = try notesfs(a.path, ["sync", "encrypt", "--passphrase-file", scratch + "/passphrase"])
        #expect(run.status == 0, "\(run)")
        #expect(try connection.execute("SELECT count(*) AS n FROM notesfs_records WHERE sealed IS NULL").value(0, "n") == "0")
        #expect(try connection.execute("SELECT count(*) AS n FROM notesfs_assets").value(0, "n") == "0")
        let (b, _) = try Self.machine(on: server)
        try b.sync()
        #expect(try b.note("plain").text == "plain\n")
    }

    /// A recovery key file that is no key (1 MiB of bytes) is refused after reading at most 4 KiB,
    /// and nothing is written.
    @Test func aRecoveryKeyFileOfAMegabyteIsRefusedUnread() throws {
        let (server, _, _) = try Self.machines(1)
        let scratch = makeTemporaryDirectory("notesfs-recovery-file")
        try Data(repeating: 0x41, count: 1 << 20).write(to: URL(fileURLWithPath: scratch + "/big"))
        let run = try notesfs(scratch + "/db", ["sync", "init", server, "--recovery-key-file", scratch + "/big"])
        #expect(run.status != 0 && run.stderr.contains("over 4096 bytes"), "\(run)")
        #expect(!FileManager.default.fileExists(atPath: SyncState.path(forDatabase: scratch + "/db")))
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
