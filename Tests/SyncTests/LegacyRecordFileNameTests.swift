import Foundation
import TestSupport
import Testing

@testable import Sync

/// Record files named as earlier versions named them (`%XX` in uppercase hex, `%%` and a SHA-256
/// for a long name) are still found, and replaced by the current names (the record store's
/// encoding) when their records are next saved or removed. No server is needed.
struct LegacyRecordFileNameTests {
    /// Record names with the file names earlier versions gave them, as such databases hold them.
    static let oldNames: [(name: String, file: String)] = [
        ("a/b", "a%2Fb.json"),
        ("naïve 名前", "na%C3%AFve%20%E5%90%8D%E5%89%8D.json"),
        ("../x", "%2E%2E%2Fx.json"),
        (String(repeating: "/", count: 60), String(repeating: "%2F", count: 60) + ".json"),
        (String(repeating: "n", count: 300), "%%230b077491957fb486227d8d66cc84eb751bc5475cc5c41e99d9b1caf847732f.json"),
    ]

    static func base(_ name: String) -> String { #"{"fields":{"text":"base of \#(name)"}}"# }

    /// A database whose `sync/records/` holds the records of ``oldNames`` and `plain`, each file
    /// under its old name.
    func databaseWrittenTheOldWay() throws -> String {
        let path = makeTemporaryDirectory("notesfs-legacy")
        var state = SyncState(server: "host=/nowhere", clientID: "client", host: "host")
        for (seq, name) in (Self.oldNames.map(\.name) + ["plain"]).enumerated() {
            state.records[name] = SyncedRecord(recordType: "Note", serverSeq: Int64(seq + 1), localTag: "t\(seq)", base: Self.base(name))
        }
        try state.save(databasePath: path)
        let directory = SyncedRecordFiles.directory(forDatabase: path)
        for (name, old) in Self.oldNames {
            #expect(SyncedRecordFiles.fileName(of: name) != old)
            try FileManager.default.moveItem(atPath: directory + "/" + SyncedRecordFiles.fileName(of: name), toPath: directory + "/" + old)
        }
        #expect(try files(path).sorted() == (Self.oldNames.map(\.file) + ["plain.json"]).sorted())
        return path
    }

    func files(_ path: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: SyncedRecordFiles.directory(forDatabase: path))
    }

    @Test func filesUnderTheirOldNamesAreFoundWithTheirBases() throws {
        let path = try databaseWrittenTheOldWay()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let state = try #require(try SyncState.load(databasePath: path))
        #expect(Set(state.records.keys) == Set(Self.oldNames.map(\.name) + ["plain"]))
        for (seq, name) in (Self.oldNames.map(\.name) + ["plain"]).enumerated() {
            let record = try #require(state.records[name])
            #expect(record.serverSeq == Int64(seq + 1) && record.localTag == "t\(seq)")
            let base = try record.base
            #expect(base == Self.base(name))
        }
    }

    @Test func aSaveOrRemovalReplacesTheOldNames() throws {
        let path = try databaseWrittenTheOldWay()
        defer { try? FileManager.default.removeItem(atPath: path) }
        var state = try #require(try SyncState.load(databasePath: path))
        let (saved, removed) = (Self.oldNames[0].name, Self.oldNames[1].name)
        // A change of the type only: the base is read from the file under its old name.
        var record = try #require(state.records[saved])
        record.serverSeq = 99
        state.records[saved] = record
        state.records[removed] = nil
        try state.save(databasePath: path)
        let names = try files(path)
        #expect(names.contains(SyncedRecordFiles.fileName(of: saved)))
        #expect(!names.contains(Self.oldNames[0].file) && !names.contains(Self.oldNames[1].file))
        #expect(!names.contains(SyncedRecordFiles.fileName(of: removed)))

        let reloaded = try #require(try SyncState.load(databasePath: path))
        #expect(reloaded.records[removed] == nil)
        let again = try #require(reloaded.records[saved])
        let base = try again.base
        #expect(again.serverSeq == 99 && base == Self.base(saved))
    }

    /// A save that wrote the new file and was killed before it removed the old one: the new one counts.
    @Test func theCurrentNameWinsOverALeftOldOne() throws {
        let path = try databaseWrittenTheOldWay()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let directory = SyncedRecordFiles.directory(forDatabase: path)
        let (name, old) = Self.oldNames[2]
        var state = try #require(try SyncState.load(databasePath: path))
        var record = try #require(state.records[name])
        record.serverSeq = 77
        state.records[name] = record
        let kept = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + old))
        try state.save(databasePath: path)
        try kept.write(to: URL(fileURLWithPath: directory + "/" + old))
        let reloaded = try #require(try SyncState.load(databasePath: path))
        #expect(reloaded.records[name]?.serverSeq == 77)
    }
}
