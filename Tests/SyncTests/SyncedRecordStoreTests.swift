import Foundation
import Notes
import RecordStore
import Sync
import TestSupport
import Testing

/// The synced records (merge bases) kept one file a record in `<db>/sync/records/`, beside a
/// state.json of the small things: the layout, hostile record names, the migration from the
/// format 1 state.json that held every record, and a kill between the record files and
/// state.json (emulated: the files of a save put back to any mix of before and after, with the
/// state.json of before).
@Suite struct SyncedRecordStoreTests {
    static let hostileNames = [
        "../x", "a/b", ".", "..", "/etc/passwd", "%2E%2E", "%%", "naïve 名前", String(repeating: "n", count: 300),
        String(repeating: "/", count: 120),
    ]

    static func text(_ head: String) -> String { "\(head)\n\nmiddle\n\ntail\n" }

    /// Edits the first line of note `name` on `a` and the last on `b`, syncs, and checks that
    /// both merged cleanly into the same text (which needs the right base on each).
    func expectEditsApartMerge(_ name: String, _ a: Machine, _ b: Machine) throws {
        var onA = try a.note(name)
        let head = String(onA.text.prefix { $0 != "\n" })
        onA.text = onA.text.replacingOccurrences(of: head + "\n", with: head + " from a\n")
        try a.save([onA.record])
        var onB = try b.note(name)
        onB.text = onB.text.replacingOccurrences(of: "tail\n", with: "tail from b\n")
        try b.save([onB.record])
        try syncAll([a, b])
        #expect(try a.note(name).text == "\(head) from a\n\nmiddle\n\ntail from b\n")
        #expect(try b.note(name).text == a.note(name).text)
        #expect(try a.notes().count == b.notes().count)
        #expect(try SyncEngine(database: a.database).state.conflicts.isEmpty)
    }

    func recordsDirectory(_ path: String) -> String { path + "/sync/records" }
    func stateFile(_ path: String) -> String { SyncState.path(forDatabase: path) }

    /// Every file under `directory`, by path relative to it, with its contents.
    func snapshot(_ directory: String) throws -> [String: Data] {
        var files: [String: Data] = [:]
        guard let enumerator = FileManager.default.enumerator(atPath: directory) else { return files }
        while let path = enumerator.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: directory + "/" + path, isDirectory: &isDirectory), !isDirectory.boolValue {
                files[path] = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + path))
            }
        }
        return files
    }

    /// Makes the files of `directory` exactly `files` (paths relative to it).
    func restore(_ directory: String, _ files: [String: Data]) throws {
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for (path, data) in files { try data.write(to: URL(fileURLWithPath: directory + "/" + path)) }
    }

    func temporaryDatabasePath() -> String {
        let path = makeTemporaryDirectory("notesfs-records") + "/db"
        mkdir(path, 0o700)
        return path
    }

    @Test func everyRecordHasAFileOfItsOwnInsideTheDirectoryWhateverItsName() throws {
        let path = temporaryDatabasePath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        var state = SyncState(server: "host=/nowhere", clientID: "client", host: "host")
        let names = Self.hostileNames + (0..<20).map { "note-\($0)" }
        for (seq, name) in names.enumerated() {
            state.records[name] = SyncedRecord(
                recordType: "Note", serverSeq: Int64(seq + 1), localTag: "tag\(seq)", base: #"{"fields":{"text":"base of \#(name)"}}"#)
        }
        try state.save(databasePath: path)
        let syncFiles = try snapshot(path + "/sync")
        let recordFiles = syncFiles.keys.filter { $0.hasPrefix("records/") }
        #expect(recordFiles.count == names.count)
        // Nothing but state.json, the lock and the record files; every record file directly in records/.
        #expect(Set(syncFiles.keys).subtracting(recordFiles) == ["state.json"])
        for file in recordFiles {
            let name = String(file.dropFirst("records/".count))
            #expect(!name.contains("/") && name != "." && name != ".." && name.utf8.count < 255, "\(file)")
        }
        #expect(!FileManager.default.fileExists(atPath: path + "/x") && !FileManager.default.fileExists(atPath: path + "/sync/x"))

        let loaded = try #require(try SyncState.load(databasePath: path))
        #expect(Set(loaded.records.keys) == Set(names))
        for (seq, name) in names.enumerated() {
            let record = try #require(loaded.records[name])
            #expect(record.serverSeq == Int64(seq + 1) && record.localTag == "tag\(seq)" && record.recordType == "Note")
            #expect(try record.base == #"{"fields":{"text":"base of \#(name)"}}"#)
        }
        // A removed record's file goes at the next save.
        var changed = loaded
        changed.records["../x"] = nil
        try changed.save(databasePath: path)
        #expect(try snapshot(recordsDirectory(path)).count == names.count - 1)
        #expect(try SyncState.load(databasePath: path)?.records["../x"] == nil)
    }

    @Test(.tags(.postgres), .needsPostgres) func hostileRecordNamesFromAPeerStayInsideTheRecordsDirectory() throws {
        let (_, machines) = try makeMachines(2)
        let (a, b) = (machines[0], machines[1])
        try a.save(Self.hostileNames.enumerated().map { note("N\($0.offset)", id: $0.element, text: Self.text("head \($0.offset)")) })
        try syncAll(machines)
        for machine in machines {
            let files = try snapshot(machine.path + "/sync")
            #expect(files.keys.filter { $0.hasPrefix("records/") }.count == Self.hostileNames.count)
            #expect(Set(files.keys.filter { !$0.hasPrefix("records/") }) == ["state.json", "lock", "password"])
            #expect(!FileManager.default.fileExists(atPath: machine.path + "/sync/x"))
        }
        #expect(try a.contents() == b.contents())
        // The bases are there for a merge: both edit one note's lines apart, and it merges cleanly.
        try expectEditsApartMerge(Self.hostileNames[0], a, b)
        try expectEditsApartMerge(Self.hostileNames[8], b, a)
        #expect(try a.contents() == b.contents())
    }

    @Test(.tags(.postgres), .needsPostgres) func stateJSONDoesNotGrowWithTheRecords() throws {
        let (_, machines) = try makeMachines(1)
        let a = machines[0]
        let text = String(repeating: "a line of a note\n", count: 60)
        try a.save((0..<10).map { note("N\($0)", id: "n\($0)", text: text) })
        try a.sync()
        let small = try Data(contentsOf: URL(fileURLWithPath: stateFile(a.path))).count
        try a.save((10..<300).map { note("N\($0)", id: "n\($0)", text: text) })
        try a.sync()
        let state = try Data(contentsOf: URL(fileURLWithPath: stateFile(a.path)))
        #expect(try snapshot(recordsDirectory(a.path)).count == 300)
        // 290 more notes of 1 KB: state.json grows by a few digits of seq and token at most.
        #expect(state.count < small + 64, "state.json \(small) -> \(state.count) bytes")
        #expect(!String(decoding: state, as: UTF8.self).contains("a line of a note"))
    }

    /// Rewrites the state of `path` in format 1 (every record inside state.json), as an older
    /// notesfs left it, and removes the record files.
    func downgradeToFormatOne(_ path: String) throws {
        let state = try #require(try SyncState.load(databasePath: path))
        var object = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: stateFile(path)))) as? [String: Any])
        var records: [String: Any] = [:]
        for name in state.records.keys {
            let record = try #require(state.records[name])
            var entry: [String: Any] = ["recordType": record.recordType, "serverSeq": record.serverSeq, "base": try record.base]
            if let tag = record.localTag { entry["localTag"] = tag }
            records[name] = entry
        }
        object["records"] = records
        object["format"] = 1
        object["saveID"] = nil
        try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]).write(to: URL(fileURLWithPath: stateFile(path)))
        try FileManager.default.removeItem(atPath: recordsDirectory(path))
    }

    @Test(.tags(.postgres), .needsPostgres) func aFormatOneStateIsMigratedWithNothingSyncedAgain() throws {
        let (server, machines) = try makeMachines(2)
        let (a, b) = (machines[0], machines[1])
        try a.save(
            [folder("Work", id: "work")] + (0..<30).map { note("N\($0)", id: "n\($0)", text: Self.text("head \($0)"), folder: "work") })
        try syncAll(machines)
        let rows = try serverRows(server)
        for machine in machines { try downgradeToFormatOne(machine.path) }
        let formatOne = try #require(try SyncState.load(databasePath: a.path))
        #expect(formatOne.format == 1 && formatOne.records.count == 31)
        // Killed in the middle of the migration: a few record files written, state.json still format 1.
        try a.sync()
        let migrated = try snapshot(recordsDirectory(a.path))
        try downgradeToFormatOne(a.path)
        try restore(recordsDirectory(a.path), migrated.filter { $0.key.hasPrefix("n1") })
        for machine in machines {
            let report = try machine.sync()
            #expect(report.pushed == 0 && report.fetched == 0 && report.conflictCopies.isEmpty)
            let state = try #require(try SyncState.load(databasePath: machine.path))
            #expect(state.format == SyncState.formatVersion && state.records.count == 31)
            #expect(try snapshot(recordsDirectory(machine.path)).count == 31)
            let json = try #require(
                try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: stateFile(machine.path)))) as? [String: Any])
            #expect((json["records"] as? [String: Any])?.isEmpty == true)
        }
        #expect(try serverRows(server).mapValues(\.seq) == rows.mapValues(\.seq))
        // The migrated bases merge: edits apart on both machines merge cleanly.
        try expectEditsApartMerge("n3", a, b)
        #expect(try a.contents() == b.contents())
    }

    /// The record files and state.json of `machine` as a kill during the save of `after` can
    /// leave them: state.json of `before`, each record file as in `before` or as in `after`
    /// (chosen by `generator`), temp files of the save left behind.
    func crash(_ machine: Machine, before: [String: Data], after: [String: Data], _ generator: inout some RandomNumberGenerator) throws
        -> Int
    {
        var files: [String: Data] = [:]
        var fromAfter = 0
        for path in Set(before.keys).union(after.keys) where path.hasPrefix("records/") {
            let name = String(path.dropFirst("records/".count))
            if Bool.random(using: &generator) {
                if let data = after[path] { files[name] = data }
                fromAfter += 1
            } else {
                if let data = before[path] { files[name] = data }
                if let data = after[path] { files[name + ".tmp-99999"] = data.prefix(data.count / 2) }  // a torn temp
            }
        }
        try restore(recordsDirectory(machine.path), files)
        try #require(before["state.json"]).write(to: URL(fileURLWithPath: stateFile(machine.path)))
        return fromAfter
    }

    /// Two notes synced to every machine, then one save of `a` (40 new notes and an edit) and a
    /// delete, not synced yet.
    func seedThenChange(_ a: Machine, _ machines: [Machine]) throws {
        try a.save([note("Gone", id: "gone"), note("Edited", id: "edited", text: Self.text("one"))])
        try syncAll(machines)
        var edited = try a.note("edited")
        edited.text = Self.text("two")
        try a.save([edited.record] + (0..<40).map { note("N\($0)", id: "n\($0)", text: Self.text("head \($0)")) })
        try a.database.modify(deleting: [RecordID(recordName: "gone")])
    }

    @Test(.tags(.postgres), .needsPostgres, arguments: [1, 2, 3, 4])
    func aKillBetweenTheRecordFilesAndStateJSONOfAPushLosesAndDuplicatesNothing(seed: UInt64) throws {
        var generator = SeededGenerator(state: seed)
        let (server, machines) = try makeMachines(2)
        let (a, b) = (machines[0], machines[1])
        try seedThenChange(a, machines)
        let before = try snapshot(a.path + "/sync")
        try a.sync()
        let after = try snapshot(a.path + "/sync")
        let rows = try serverRows(server)
        _ = try crash(a, before: before, after: after, &generator)
        let report = try a.sync()
        #expect(report.pushed == 0 && report.conflictCopies.isEmpty)
        #expect(try serverRows(server).mapValues(\.seq) == rows.mapValues(\.seq))
        #expect(try snapshot(recordsDirectory(a.path)).keys.allSatisfy { !$0.contains(".tmp-") })
        try syncAll(machines)
        #expect(try b.notes().count == 41 && !b.has("gone"))
        #expect(try b.note("edited").text == Self.text("two"))
        #expect(try a.contents() == b.contents())
        #expect(a.database.metadata(ofType: Note.recordType).count == 41)
    }

    @Test(.tags(.postgres), .needsPostgres, arguments: [1, 2, 3, 4]) func aKillBetweenTheRecordFilesAndStateJSONOfAPullMakesNoConflict(
        seed: UInt64
    ) throws {
        var generator = SeededGenerator(state: seed)
        let (server, machines) = try makeMachines(2)
        let (a, b) = (machines[0], machines[1])
        try seedThenChange(a, machines)
        try a.sync()
        let before = try snapshot(b.path + "/sync")
        try b.sync()
        let after = try snapshot(b.path + "/sync")
        let rows = try serverRows(server)
        _ = try crash(b, before: before, after: after, &generator)
        let report = try b.sync()
        #expect(report.conflictCopies.isEmpty && report.pushed == 0)
        #expect(try serverRows(server).mapValues(\.seq) == rows.mapValues(\.seq))
        // And b merges against the right bases after the crash.
        try expectEditsApartMerge("edited", a, b)
        try expectEditsApartMerge("n7", b, a)
        #expect(try b.notes().count == 41 && !b.has("gone"))
        #expect(try a.contents() == b.contents())
    }

    /// A record file that cannot be written (a directory stands at the name of its temp file:
    /// open(2) fails with EISDIR, even for root) fails the save before state.json is touched;
    /// once it can, the next sync converges with nothing pushed twice.
    @Test(.tags(.postgres), .needsPostgres) func stateJSONIsNeverWrittenAheadOfARecordFileItNeeds() throws {
        let (server, machines) = try makeMachines(2)
        let (a, b) = (machines[0], machines[1])
        try a.save([note("First", id: "first")])
        try syncAll([a])  // and a knows of its push: the sync below has nothing to fetch
        try a.save((0..<20).map { note("N\($0)", id: "n\($0)", text: Self.text("head \($0)")) })
        let obstacle = recordsDirectory(a.path) + "/n7.json.tmp-\(getpid())"
        try FileManager.default.createDirectory(atPath: obstacle + "/inside", withIntermediateDirectories: true)
        let before = try #require(try SyncState.load(databasePath: a.path, includingRecords: false))
        #expect(throws: SyncError.self) { try a.sync() }
        // The push committed on the server, and state.json is as it was but for the generation
        // saved before the push: its local token does not pass changes whose record files are not written.
        #expect(try serverRows(server).count == 21)
        let after = try #require(try SyncState.load(databasePath: a.path, includingRecords: false))
        #expect(after.localToken == before.localToken && after.serverSeq == before.serverSeq)
        #expect(after.generation == before.generation + 1)
        try FileManager.default.removeItem(atPath: obstacle)
        let rows = try serverRows(server)
        #expect(try a.sync().pushed == 0)
        #expect(try serverRows(server).mapValues(\.seq) == rows.mapValues(\.seq))
        try syncAll(machines)
        #expect(try b.notes().count == 21)
        try expectEditsApartMerge("n7", a, b)
    }

    /// A long-running engine (a mount's) keeps its index of the record files between syncs; when
    /// another engine (`notesfs sync`) synced the database meanwhile — even one killed after its
    /// record files and before its state.json — it must read them again, or it would push over
    /// versions it does not know of and merge against no base (a conflict copy).
    @Test(.tags(.postgres), .needsPostgres) func aLongRunningEngineSeesWhatAnotherProcessSynced() throws {
        let (server, machines) = try makeMachines(2)
        let (a, b) = (machines[0], machines[1])
        let mount = try SyncEngine(database: a.database)
        try mount.sync()
        for (phase, killed) in [(0, false), (1, true)] {
            try a.save([note("P\(phase)", id: "p\(phase)", text: Self.text("head \(phase)"))])
            let before = try Data(contentsOf: URL(fileURLWithPath: stateFile(a.path)))
            try a.sync()  // another process: a new engine
            if killed { try before.write(to: URL(fileURLWithPath: stateFile(a.path))) }
            var edited = try a.note("p\(phase)")
            edited.text = Self.text("edited \(phase)")
            try a.save([edited.record])
            let report = try mount.sync()
            #expect(report.conflictCopies.isEmpty && report.merged == 0, "phase \(phase)")
            #expect(try serverRows(server).keys.filter { $0.hasPrefix("p") }.count == phase + 1)  // not the versions of p0, p1
        }
        try syncAll(machines)
        #expect(try b.note("p0").text == Self.text("edited 0") && b.note("p1").text == Self.text("edited 1"))
        #expect(try a.contents() == b.contents())
    }

    @Test(.tags(.postgres), .needsPostgres) func leftoverTempFilesAreIgnoredAndRemovedAtTheNextSync() throws {
        let (_, machines) = try makeMachines(1)
        let a = machines[0]
        try a.save([note("One", id: "one")])
        try a.sync()
        let leftover = recordsDirectory(a.path) + "/one.json.tmp-12345"
        try Data("{\"torn".utf8).write(to: URL(fileURLWithPath: leftover))
        #expect(try SyncState.load(databasePath: a.path)?.records.count == 1)
        try a.sync()
        #expect(!FileManager.default.fileExists(atPath: leftover))
    }

    @Test(.tags(.postgres), .needsPostgres) func aDamagedRecordFileIsAClearErrorNotACrash() throws {
        let (_, machines) = try makeMachines(1)
        let a = machines[0]
        try a.save([note("One", id: "one")])
        try a.sync()
        let file = recordsDirectory(a.path) + "/one.json"
        try Data("not a record file".utf8).write(to: URL(fileURLWithPath: file))
        #expect {
            try a.sync()
        } throws: { error in
            guard case SyncError.state(let path, let reason) = error else { return false }
            return path == file && reason.contains("damaged")
        }
    }
}
