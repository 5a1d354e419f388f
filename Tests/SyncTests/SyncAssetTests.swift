import Foundation
import Notes
import Postgres
import RecordStore
import Sync
import TestSupport
import Testing

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Attachments travel in 1 MiB chunks (schema version 2), and a record that cannot be pushed is
/// reported without holding back the others.
@Suite(.tags(.postgres), .needsPostgres) struct SyncAssetTests {
    /// Seeded bytes that do not compress (every byte value, in no order).
    static func bytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var state = seed
        return (0..<count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 33)
        }
    }

    func attachment(_ name: String, id: String, _ machine: Machine, bytes: [UInt8]) throws -> Record {
        Attachment(name: name, content: try machine.database.makeAsset(Data(bytes)), recordID: RecordID(recordName: id)).record
    }

    func content(_ machine: Machine, _ id: String) throws -> [UInt8]? {
        guard let asset = try machine.database.record(for: RecordID(recordName: id))["content"]?.assetValue else { return nil }
        return try [UInt8](machine.database.assetData(asset))
    }

    @Test func anAttachmentTravelsInChunksAndArrivesWhole() throws {
        let (server, machines) = try makeMachines(2)
        let (a, b) = (machines[0], machines[1])
        let data = Self.bytes(5 << 20 + 12345, seed: 1)
        try a.save([try attachment("photo.raw", id: "photo", a, bytes: data), try attachment("empty.bin", id: "empty", a, bytes: [])])
        try syncAll(machines)
        #expect(try content(b, "photo") == data)
        #expect(try content(b, "empty") == [])
        let connection = try Connection(server)
        let chunks = try connection.execute(
            "SELECT count(*) AS n, max(octet_length(data)) AS largest, sum(octet_length(data)) AS total FROM notesfs_asset_chunks")
        #expect(chunks.value(0, "n") == "6")
        #expect(chunks.value(0, "largest") == String(1 << 20))
        #expect(chunks.value(0, "total") == String(data.count))
        #expect(try connection.execute("SELECT count(*) AS n FROM notesfs_assets").value(0, "n") == "2")
    }

    @Test func anUploadBrokenOffSendsOnlyTheMissingChunks() throws {
        let (server, machines) = try makeMachines(2)
        let (a, b) = (machines[0], machines[1])
        let data = Self.bytes(3 << 20 + 7, seed: 2)
        try a.save([try attachment("one.bin", id: "one", a, bytes: data)])
        try a.sync()
        let connection = try Connection(server)
        let sha = try #require(try a.database.record(for: RecordID(recordName: "one"))["content"]?.assetValue?.sha256)
        // As if the upload had been cut off after two chunks: no completion row, chunks 2 and 3 gone.
        try connection.execute("DELETE FROM notesfs_assets WHERE sha256 = $1", [sha])
        try connection.execute("DELETE FROM notesfs_asset_chunks WHERE sha256 = $1 AND chunk >= 2", [sha])
        let before = try connection.execute("SELECT chunk, xmin::text AS x FROM notesfs_asset_chunks ORDER BY chunk").rows
        // A second record with the same bytes makes the next push upload the asset again.
        try a.save([
            Attachment(name: "two.bin", content: try a.database.makeAsset(Data(data)), recordID: RecordID(recordName: "two")).record
        ])
        try a.sync()
        let after = try connection.execute("SELECT chunk, xmin::text AS x FROM notesfs_asset_chunks ORDER BY chunk").rows
        #expect(after.count == 4)
        #expect(Array(after.prefix(2)) == before)  // the two chunks the server held were not sent again
        try b.sync()
        #expect(try content(b, "one") == data)
        #expect(try content(b, "two") == data)
    }

    /// The server goes away in the middle of an attachment's upload (its backend terminated while
    /// the fourth chunk waits on a lock): the sync fails saying so, nothing local is lost, and the
    /// next sync sends only the chunks the server did not commit.
    @Test func anUploadCutOffByTheServerResumesWhereItStopped() throws {
        let (server, machines) = try makeMachines(2)
        let (a, b) = (machines[0], machines[1])
        let data = Self.bytes(6 << 20 + 5, seed: 8)
        try a.save([try attachment("video.raw", id: "video", a, bytes: data)])
        let connection = try Connection(server)
        try holdInserts(into: "notesfs_asset_chunks", when: "NEW.chunk = 3", lock: 4243, on: connection)
        let sync = try startNotesfs(a.path, ["sync"])
        defer { if sync.isRunning { kill(sync.processIdentifier, SIGKILL) } }
        let blocked = try backendWaitingOnAdvisoryLock(server, while: sync)
        let pid = try #require(blocked, "the upload never reached the held chunk")
        try connection.execute("SELECT pg_terminate_backend($1::int)", [pid])
        sync.waitUntilExit()
        #expect(sync.terminationStatus != 0)
        try connection.execute("SELECT pg_advisory_unlock(4243)")
        try connection.execute("DROP TRIGGER hold_notesfs_asset_chunks ON notesfs_asset_chunks")
        let status = try #require(try SyncStatus.read(database: a.database))
        #expect(status.lastError?.contains("the connection broke during the sync") == true, "\(status.lastError ?? "")")
        #expect(status.pendingChanges == 1)
        let sent = try connection.execute("SELECT chunk, xmin::text AS x FROM notesfs_asset_chunks ORDER BY chunk").rows
        #expect(sent.map { $0[0] } == ["0", "1", "2"])
        #expect(try connection.execute("SELECT count(*) AS n FROM notesfs_assets").value(0, "n") == "0")
        #expect(try content(a, "video") == data)  // nothing local lost

        try a.sync()
        let after = try connection.execute("SELECT chunk, xmin::text AS x FROM notesfs_asset_chunks ORDER BY chunk").rows
        #expect(after.count == 7)
        #expect(Array(after.prefix(3)) == sent)  // the committed chunks were not sent again
        try b.sync()
        #expect(try content(b, "video") == data)
    }

    @Test func aDamagedAttachmentFileIsReportedAndHoldsBackNothingElse() throws {
        let (server, machines) = try makeMachines(2)
        let (a, b) = (machines[0], machines[1])
        let data = Self.bytes(2 << 20, seed: 3)
        try a.save(
            [try attachment("bad.bin", id: "bad", a, bytes: data)] + (0..<30).map { note("N\($0)", id: "n\($0)", text: "line \($0)\n") })
        let asset = try #require(try a.database.record(for: RecordID(recordName: "bad"))["content"]?.assetValue)
        let path = a.database.assetPath(asset)
        var damaged = data
        damaged[12345] ^= 0xff
        try Data(damaged).write(to: URL(fileURLWithPath: path))
        // The command says which record it could not push, and fails.
        let run = try notesfs(a.path, ["sync"])
        #expect(run.status != 0)
        #expect(run.stderr.contains("not pushed: bad: ") && run.stderr.contains("SHA-256"), "\(run.stderr)")
        #expect(run.stderr.contains("synced: 30 pushed"), "\(run.stderr)")
        let shown = try notesfs(a.path, ["sync", "status"]).out
        #expect(shown.contains("records that cannot be pushed: 1") && shown.contains("  bad: "), "\(shown)")
        let report = try a.sync()
        #expect(report.failures.map(\.recordName) == ["bad"])
        #expect(report.failures.first?.reason.contains("SHA-256") == true)
        #expect(report.pushed == 0)
        let status = try #require(try SyncStatus.read(database: a.database))
        #expect(status.failures.map(\.recordName) == ["bad"])
        #expect(status.pendingChanges == 1)
        // Nothing of the damaged bytes reached the server.
        #expect(try Connection(server).execute("SELECT count(*) AS n FROM notesfs_asset_chunks").value(0, "n") == "0")
        try b.sync()
        #expect(try b.notes().count == 30)
        #expect(!b.has("bad"))
        // Repaired, it goes through with the next sync, and the report clears.
        try Data(data).write(to: URL(fileURLWithPath: path))
        #expect(try a.sync().failures.isEmpty)
        #expect(try SyncStatus.read(database: a.database)?.failures.isEmpty == true)
        #expect(try SyncStatus.read(database: a.database)?.pendingChanges == 0)
        try b.sync()
        #expect(try content(b, "bad") == data)
    }

    @Test func aRecordTheServerRefusesIsReportedAndTheRestGoesThrough() throws {
        let (server, machines) = try makeMachines(2)
        let (a, b) = (machines[0], machines[1])
        // A real PostgreSQL error of class 54 (program limit exceeded), as a value over one of the
        // server's limits raises it: from a trigger, for payloads over 4,000 bytes.
        let admin = try Connection(server)
        try admin.execute(
            """
            CREATE FUNCTION refuse_large() RETURNS trigger AS $$ BEGIN
              IF octet_length(NEW.payload::text) > 4000 THEN
                RAISE EXCEPTION 'payload too large' USING ERRCODE = 'program_limit_exceeded';
              END IF;
              RETURN NEW;
            END $$ LANGUAGE plpgsql
            """)
        try admin.execute(
            """
            CREATE TRIGGER refuse_large BEFORE INSERT OR UPDATE ON notesfs_records FOR EACH ROW EXECUTE FUNCTION refuse_large();
            """)
        let big = String(repeating: "a long line of text\n", count: 400)
        try a.save((0..<10).map { note("N\($0)", id: "n\($0)", text: "small \($0)\n") } + [note("Big", id: "big", text: big)])
        let report = try a.sync()
        #expect(report.failures.map(\.recordName) == ["big"])
        #expect(report.failures.first?.reason.contains("payload too large") == true)
        #expect(report.pushed == 10)
        try b.sync()
        #expect(try b.notes().count == 10)
        #expect(try a.note("big").text == big)  // kept locally, whole
        try admin.execute("DROP TRIGGER refuse_large ON notesfs_records")
        #expect(try a.sync().failures.isEmpty)
        try b.sync()
        #expect(try b.note("big").text == big)
    }

    @Test func aVersion1ServerIsMigratedWithItsAssets() throws {
        let (server, machines) = try makeMachines(2)
        let (a, b) = (machines[0], machines[1])
        let connection = try Connection(server)
        // Back to the version 1 layout (assets inline in notesfs_assets), holding one asset and a record.
        try connection.execute("DROP TABLE notesfs_asset_chunks")
        try connection.execute("DROP TABLE notesfs_pushes")
        try connection.execute("DROP TABLE notesfs_server")
        try connection.execute("DROP TABLE notesfs_clients")
        try connection.execute("ALTER TABLE notesfs_assets ADD COLUMN data bytea NOT NULL")
        try connection.execute("UPDATE notesfs_schema SET version = 1")
        let data = Self.bytes(2 << 20 + 99, seed: 4)
        let asset = try a.database.makeAsset(Data(data))
        try connection.execute("INSERT INTO notesfs_assets VALUES ($1, $2, $3)", [asset.sha256, String(data.count)], bytes: data)
        let payload = RecordPayload(
            fields: ["name": .string("old.bin"), "content": .asset(asset)], modificationDate: Date(timeIntervalSince1970: 1_000))
        try connection.execute(
            "INSERT INTO notesfs_records VALUES ('old', 'Attachment', nextval('notesfs_seq'), false, $1::jsonb, 'v1-client/1')",
            [payload.jsonText])
        // This notesfs refuses the old schema with a message saying what to do.
        #expect {
            try b.sync()
        } throws: { error in
            "\(error)".contains("run 'notesfs sync init URL' to migrate it")
        }
        try SyncEngine.initialize(database: b.database, server: server)
        try b.sync()
        #expect(try content(b, "old") == data)
        #expect(try connection.execute("SELECT max(version) AS v FROM notesfs_schema").value(0, "v") == "5")
        #expect(try connection.execute("SELECT count(*) AS n FROM notesfs_asset_chunks").value(0, "n") == "3")
        try a.sync()
        #expect(try content(a, "old") == data)
    }

    @Test func anAttachmentChangedOnBothMachinesKeepsBoth() throws {
        let (_, machines) = try makeMachines(2)
        let (a, b) = (machines[0], machines[1])
        let original = Self.bytes(100_000, seed: 5)
        try a.save([try attachment("photo.jpg", id: "photo", a, bytes: original)])
        try syncAll(machines)
        let fromA = Self.bytes(120_000, seed: 6)
        let fromB = Self.bytes(90_000, seed: 7)
        for (machine, bytes) in [(a, fromA), (b, fromB)] {
            var record = try machine.database.record(for: RecordID(recordName: "photo"))
            record["content"] = .asset(try machine.database.makeAsset(Data(bytes)))
            try machine.save([record])
        }
        try a.sync()
        let report = try b.sync()
        #expect(report.conflictCopies.count == 1)
        try syncAll(machines)
        for machine in machines {
            let attachments = try machine.database.metadata(ofType: Attachment.recordType).map {
                try Attachment(record: machine.database.record(for: $0.recordID))
            }
            #expect(
                Set(attachments.map(\.name)) == [
                    "photo.jpg", "photo (conflict \(Self.today()) \(try SyncEngine(database: b.database).state.host)).jpg",
                ])
            let contents = try attachments.map { try [UInt8](machine.database.assetData(#require($0.content))) }
            let bothKept = Set(contents) == [fromA, fromB]  // (compared apart: a failure prints no bytes)
            #expect(bothKept)
            let serversStays = try content(machine, "photo") == fromA  // the first pushed stays under the name
            #expect(serversStays)
        }
        #expect(try a.contents() == b.contents())
    }

    static func today() -> String {
        let parts = Calendar(identifier: .gregorian).dateComponents([.year, .month, .day], from: Date())
        return String(format: "%04d-%02d-%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0)
    }

    @Test func creationDatesAreTheSameOnEveryMachine() throws {
        let (_, machines) = try makeMachines(2)
        let (a, b) = (machines[0], machines[1])
        // Two notes of one title: the older keeps the plain name in the mount, so every machine
        // must agree on which is older. "b-older" is saved first; "a-newer" sorts first by name.
        try a.save([note("Same", id: "b-older", text: "first\n")])
        usleep(20_000)
        try a.save([note("Same", id: "a-newer", text: "second\n")])
        try syncAll(machines)
        for name in ["b-older", "a-newer"] {
            let id = RecordID(recordName: name)
            let created = try a.database.record(for: id).creationDate
            #expect(created != nil)
            #expect(try b.database.record(for: id).creationDate == created)
        }
        // A later edit on B keeps it.
        var edited = try b.note("b-older")
        edited.text = "first, edited\n"
        try b.save([edited.record])
        try syncAll(machines)
        #expect(
            try a.database.record(for: RecordID(recordName: "b-older")).creationDate
                == b.database.record(for: RecordID(recordName: "b-older")).creationDate)
    }
}
