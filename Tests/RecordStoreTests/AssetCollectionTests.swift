import Foundation
import TestSupport
import Testing

@testable import RecordStore

/// Asset files are freed once no record uses them, and never while one does.
@Suite struct AssetCollectionTests {
    /// The asset files under `<db>/assets/`.
    func assetFiles(_ path: String) -> Set<String> {
        let fm = FileManager.default
        var files = Set<String>()
        for shard in (try? fm.contentsOfDirectory(atPath: path + "/assets")) ?? [] {
            for name in (try? fm.contentsOfDirectory(atPath: path + "/assets/" + shard)) ?? [] { files.insert(name) }
        }
        return files
    }

    func attachment(_ name: String, _ asset: Asset, note: String? = nil) -> Record {
        var r = Record(recordType: "Attachment", recordID: RecordID(recordName: name))
        r["content"] = .asset(asset)
        if let note { r["note"] = .reference(Reference(recordID: RecordID(recordName: note), action: .deleteSelf)) }
        return r
    }

    @Test func overwriteDeleteAndCascadeFreeAssets() throws {
        let path = makeTemporaryDirectory("assets")
        let db = try makeDatabase(path)
        let one = try db.makeAsset(Data("version one".utf8))
        let shared = try db.makeAsset(Data("used twice".utf8))
        try db.modify(saving: [
            folder("top"), folder("inner", parent: "top"), note("n", folder: "inner"),
            attachment("a", one, note: "n"), attachment("s1", shared), attachment("s2", shared),
        ])
        try db.sync()
        #expect(assetFiles(path) == [one.sha256, shared.sha256])

        // Overwrite: the old bytes go at the next sync.
        let two = try db.makeAsset(Data("version two".utf8))
        var a = try db.record(for: RecordID(recordName: "a"))
        a["content"] = .asset(two)
        try db.modify(saving: [a])
        try db.sync()
        #expect(assetFiles(path) == [two.sha256, shared.sha256])

        // Deleting one of two users keeps the shared bytes; deleting the other frees them.
        try db.modify(deleting: [RecordID(recordName: "s1")])
        try db.sync()
        #expect(assetFiles(path).contains(shared.sha256))
        try db.modify(deleting: [RecordID(recordName: "s2")])
        try db.sync()
        #expect(assetFiles(path) == [two.sha256])

        // A folder cascade (top → inner → n → a) frees the attachment's bytes.
        let result = try db.modify(deleting: [RecordID(recordName: "top")])
        #expect(result.deletedRecordIDs.count == 4)
        try db.close()
        #expect(assetFiles(path).isEmpty)
        #expect(try db.check().problems.isEmpty)
        // Reopened (index rebuilt from the snapshot and journal), nothing is reported either.
        #expect(try makeDatabase(path).check().problems.isEmpty)
    }

    @Test func aPinnedAssetSurvivesAnotherProcessCollectingIt() throws {
        let path = makeTemporaryDirectory("pin")
        let first = try makeDatabase(path)
        let second = try makeDatabase(path)
        let bytes = Data("same bytes in two handles".utf8)
        let asset = try second.makeAsset(bytes)
        try second.modify(saving: [attachment("old", asset)])
        try second.sync()
        // `first` makes the same bytes (already on disk: pinned by a hard link, not written) ...
        #expect(try first.makeAsset(bytes) == asset)
        // ... then `second` deletes the last record using them and collects the file.
        try second.modify(deleting: [RecordID(recordName: "old")])
        try second.sync()
        #expect(!FileManager.default.fileExists(atPath: first.assetPath(asset)))
        // `first`'s save relinks the asset from its pin: the record never lacks its bytes.
        try first.modify(saving: [attachment("new", asset)])
        #expect(try first.assetData(asset) == bytes)
        try first.close()
        #expect(try first.check().problems.isEmpty)
        #expect(try second.check().problems.isEmpty)
    }

    @Test func anAssetNotSavedIsOnlySweptAfterTheGracePeriod() throws {
        let path = makeTemporaryDirectory("sweep")
        do {
            let db = try makeDatabase(path)
            _ = try db.makeAsset(Data("never saved".utf8))
            try db.close()
        }
        let db = try makeDatabase(path)
        // Young: a concurrent process may be about to save it; neither swept at open nor reported.
        #expect(assetFiles(path).count == 1)
        #expect(try db.check().problems.isEmpty)
        #expect(try db.collectOrphanedAssets(olderThan: 0).count == 1)
        #expect(assetFiles(path).isEmpty)
    }

    @Test(.tags(.slow), .notInFastRuns) func sigkillDuringSavesLeavesNoRecordWithoutItsAsset() throws {
        let path = makeTemporaryDirectory("asset-crash")
        var generator = SystemRandomNumberGenerator()
        var committed = 0
        for round in 0..<12 {
            let (child, pipe) = try launch("recordstore-stress", ["assets", path, "r\(round)", "100000"])
            usleep(UInt32.random(in: 30_000...200_000, using: &generator))
            kill(child.processIdentifier, SIGKILL)
            child.waitUntilExit()
            let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            committed += output.split(separator: "\n").filter { $0.hasPrefix("ok ") }.count

            let db = try makeDatabase(path)
            let report = try db.check()
            #expect(report.problems.isEmpty, "round \(round): \(report.problems)")
            // Every record's asset is there with its bytes.
            let records = try db.query(Query(recordType: "Attachment")).records
            for record in records {
                guard let asset = record["content"]?.assetValue else {
                    Issue.record("round \(round): \(record.recordID) has no asset")
                    continue
                }
                #expect(SHA256.hexDigest(try db.assetData(asset)) == asset.sha256)
            }
            // What the kill left unused is collected; what is used stays.
            try db.collectOrphanedAssets(olderThan: 0)
            let used = Set(records.compactMap { $0["content"]?.assetValue?.sha256 })
            #expect(assetFiles(path) == used, "round \(round)")
            try db.close()
        }
        #expect(committed > 12, "the child committed \(committed) modifies over 12 kills")
    }

    @Test func openClearsOnlyDeadProcessesTempFiles() throws {
        let path = makeTemporaryDirectory("tmpfiles")
        try makeDatabase(path).close()
        // A pid that is surely dead: a child that has exited and been reaped.
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/bin/true")
        try child.run()
        child.waitUntilExit()
        let dead = child.processIdentifier
        let live = getpid()
        for name in ["\(dead)-1.tmp", "\(dead)-pin-abc", "\(live)-7.tmp", "\(live)-pin-def", "anonymous.new"] {
            try Data("x".utf8).write(to: URL(fileURLWithPath: path + "/tmp/" + name))
        }
        _ = try makeDatabase(path)
        let left = Set(try FileManager.default.contentsOfDirectory(atPath: path + "/tmp"))
        // The live process's files (the mount's, say) and a young file without a pid stay.
        #expect(left == ["\(live)-7.tmp", "\(live)-pin-def", "anonymous.new"])
    }
}
