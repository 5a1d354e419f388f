import Foundation
import Notes
import Postgres
import RecordStore
import TestSupport
import Testing

@testable import Sync

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// One "machine": a local database in its own temporary directory, connected to a test server.
struct Machine {
    let database: RecordDatabase
    var path: String { database.path }

    @discardableResult
    func sync() throws -> SyncReport { try SyncEngine(database: database).sync() }

    func save(_ records: [Record]) throws { try database.modify(saving: records) }

    func note(_ name: String) throws -> Note { try Note(record: database.record(for: RecordID(recordName: name))) }

    /// Appends `line` to note `name`'s text (one local save).
    func append(_ line: String, to name: String) throws {
        var note = try note(name)
        note.text += line
        try save([note.record])
    }

    func has(_ name: String) -> Bool { database.metadata(for: RecordID(recordName: name)) != nil }

    /// Every record's type and fields by name: what two converged machines hold alike.
    func contents() throws -> [String: String] {
        var contents: [String: String] = [:]
        for metadata in try database.changes(since: nil).changed where metadata.recordType != "SyncAppliedPage" {
            let record = try database.record(for: metadata.recordID)
            contents[record.recordID.recordName] =
                record.recordType + " " + RecordPayload(fields: record.fields, modificationDate: nil).jsonText
        }
        return contents
    }

    func notes() throws -> [Note] {
        try database.metadata(ofType: Note.recordType).map { try Note(record: database.record(for: $0.recordID)) }
    }
}

/// The record names of the note history versions a machine holds.
func versionNames(_ machine: Machine) -> Set<String> {
    Set(machine.database.metadata(ofType: Version.recordType).map(\.recordID.recordName))
}

/// The directory every machine of this test process lives in; removed once the process has
/// exited (a kill test's machines hold thousands of notes). `--one-file-system`: a mount a
/// crashed test left inside is not walked into.
let machinesDirectory: String = {
    let directory = makeTemporaryDirectory("notesfs-sync")
    runAfterThisProcess("rm -rf --one-file-system '\(directory)'")
    return directory
}()

/// A new, empty database in a directory of its own under ``machinesDirectory`` (not connected to a server).
func makeMachineDatabase() throws -> RecordDatabase {
    let directory = makeTemporaryDirectory("machine", base: machinesDirectory)
    return try RecordDatabase(path: directory + "/db", backgroundThread: false)
}

/// `count` machines on one new server database, each after `sync init`.
func makeMachines(_ count: Int, on testCluster: TestCluster? = nil) throws -> (server: String, machines: [Machine]) {
    let server = try (testCluster ?? cluster()).makeDatabase()
    var machines: [Machine] = []
    for _ in 0..<count {
        let database = try makeMachineDatabase()
        try SyncEngine.initialize(database: database, server: server)
        machines.append(Machine(database: database))
    }
    return (server, machines)
}

/// Syncs every machine twice in turn, so that every change reaches every machine.
func syncAll(_ machines: [Machine]) throws {
    for _ in 0..<2 { for machine in machines { try machine.sync() } }
}

/// Every machine holds notes with exactly these texts (in any order).
func expectNoteTexts(_ texts: [String], on machines: [Machine], sourceLocation: SourceLocation = #_sourceLocation) throws {
    for machine in machines {
        #expect(try machine.notes().map(\.text).sorted() == texts.sorted(), sourceLocation: sourceLocation)
    }
}

/// Rows of the server's records table, by name: (seq, deleted).
func serverRows(_ server: String) throws -> [String: (seq: Int64, deleted: Bool)] {
    let result = try Connection(server).execute("SELECT record_name, seq, deleted FROM notesfs_records")
    var rows: [String: (Int64, Bool)] = [:]
    for row in result.rows.indices {
        rows[result.value(row, "record_name")!] = (Int64(result.value(row, "seq")!)!, result.value(row, "deleted") == "t")
    }
    return rows
}

func folder(_ name: String, id: String, parent: String? = nil) -> Record {
    Folder(name: name, parent: parent.map(RecordID.init(recordName:)), recordID: RecordID(recordName: id)).record
}

func note(_ title: String, id: String, text: String = "", folder: String? = nil) -> Record {
    Note(title: title, text: text, folder: folder.map(RecordID.init(recordName:)), recordID: RecordID(recordName: id)).record
}

/// `notesfs export` of each machine into a directory beside its database; the directories.
func exportTrees(_ machines: [Machine]) throws -> [String] {
    try machines.map { machine in
        let directory = machine.path + "-export"
        try? FileManager.default.removeItem(atPath: directory)
        let run = try notesfs(machine.path, ["export", directory])
        #expect(run.status == 0, "export: \(run.stderr)")
        return directory
    }
}

/// `diff -r` of the first export against each other one: the differences, empty when all agree.
func differences(between exports: [String]) throws -> String {
    var text = ""
    for other in exports.dropFirst() {
        let diff = try run(["/usr/bin/diff", "-r", exports[0], other])
        if diff.status != 0 { text += diff.out }
    }
    return text
}

/// A machine's sync state as its files were (state.json and the record files of the merge
/// bases), to put back: emulates a crash after a server transaction or a local apply committed
/// and before any of the state that records it was written.
struct SavedSyncState {
    let directory: String
    let copy: String

    init(_ machine: Machine) throws {
        directory = machine.path + "/sync"
        copy = machine.path + "-sync-saved-" + UUID().uuidString
        try FileManager.default.copyItem(atPath: directory, toPath: copy)
    }

    /// Puts the saved files back, and nothing else but the sync generation: a sync saves its
    /// raised generation before any server transaction (``SyncEngine/checkIdentity(_:)``), so a
    /// crash inside one keeps it, where a backup restored would not.
    func restore() throws {
        let databasePath = (directory as NSString).deletingLastPathComponent
        let generation = try SyncState.load(databasePath: databasePath, includingRecords: false)?.generation
        try FileManager.default.removeItem(atPath: directory)
        try FileManager.default.copyItem(atPath: copy, toPath: directory)
        if let generation, var state = try SyncState.load(databasePath: databasePath) {
            state.generation = generation
            try state.save(databasePath: databasePath)
        }
    }
}

/// The database name in a conninfo made by ``TestCluster/makeDatabase()``.
func databaseName(_ conninfo: String) -> String {
    String(conninfo.split(separator: " ").first { $0.hasPrefix("dbname=") }?.dropFirst("dbname=".count) ?? "")
}

/// The pid of the server backend of `server`'s database that waits on an advisory lock (a test's
/// trigger holding a sync there), polled for up to 30 s while `process` runs; nil if none did.
func backendWaitingOnAdvisoryLock(_ server: String, while process: Process) throws -> String? {
    let connection = try Connection(server)
    for _ in 0..<600 where process.isRunning {
        let pid = try connection.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock' AND wait_event = 'advisory'",
            [databaseName(server)]
        ).value(0, "pid")
        if let pid { return pid }
        usleep(50_000)
    }
    return nil
}

/// Makes every insert into `table` that matches `condition` (SQL over `NEW`) wait on advisory
/// lock `lock`, which `connection` takes for its session: a sync's statement stops there, in its
/// transaction, until the test terminates its backend or unlocks (`pg_advisory_unlock(lock)`).
func holdInserts(into table: String, when condition: String, lock: Int, on connection: Connection) throws {
    let function = "hold_" + table
    try connection.execute(
        """
        CREATE FUNCTION \(function)() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN IF \(condition) THEN PERFORM pg_advisory_xact_lock(\(lock)); END IF; RETURN NEW; END $$
        """)
    try connection.execute("CREATE TRIGGER \(function) BEFORE INSERT ON \(table) FOR EACH ROW EXECUTE FUNCTION \(function)()")
    try connection.execute("SELECT pg_advisory_lock(\(lock))")
}

/// Syncs `machine`, whose push of `record` commits on the server and then cannot be recorded: a
/// directory stands where this process writes the temp file of that record's state
/// (`<db>/sync/records/<file>.tmp-<pid>`), so the save fails before any record file or state.json
/// is written. What stays on disk is what a `kill -9` right after the commit leaves: the state as
/// before, and the push's intent (`<db>/sync/pushing.json`).
func pushCommittedWithoutItsState(on machine: Machine, record name: String) throws {
    let directory = SyncedRecordFiles.directory(forDatabase: machine.path)
    let blocker = SyncedRecordFiles.path(of: name, in: directory) + ".tmp-\(getpid())"
    try FileManager.default.createDirectory(atPath: blocker, withIntermediateDirectories: true)
    #expect(throws: SyncError.self) { try machine.sync() }
    try FileManager.default.removeItem(atPath: blocker)
    #expect(FileManager.default.fileExists(atPath: PushIntent.path(forDatabase: machine.path)))
}
