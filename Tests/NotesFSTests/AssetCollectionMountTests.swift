/// Attachments' contents are freed through the mount: overwriting, removing and removing a whole
/// folder of attachments leaves no asset behind once nothing uses it (note history's versions use
/// them until retention lets them go), and `fsck` is clean.

import Foundation
import Glibc
import Notes
import RecordStore
import TestSupport
import Testing

/// The asset files under `<db>/assets`.
private func assetFiles(_ databasePath: String) -> [String] {
    let root = databasePath + "/assets"
    guard let walker = FileManager.default.enumerator(atPath: root) else { return [] }
    return walker.compactMap { $0 as? String }.filter { path in
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: root + "/" + path, isDirectory: &isDirectory) && !isDirectory.boolValue
    }
}

@Suite(.tags(.mount), .needsFUSE) struct AssetCollectionMountTests {
    @Test func overwriteRemoveAndRemoveRecursiveFreeTheAssets() throws {
        try withDatabaseDirectory { db in
            try withNotesMount(databasePath: db) { m in
                let big = (0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
                // At least: a flush from another test's child (it inherits the descriptor while the
                // file is written) saves a part of the file, which history keeps as a version.
                #expect(writeBytes(m.path("big.bin"), big) == 0)
                #expect(eventually(10) { assetFiles(db).count >= 1 })
                // An overwrite replaces the asset; the replaced one is its version's (note history).
                #expect(writeBytes(m.path("big.bin"), Array(big.reversed())) == 0)
                #expect(eventually(10) { assetFiles(db).count >= 2 }, "\(assetFiles(db))")
                #expect(unlink(m.path("big.bin")) == 0)
                #expect(assetFiles(db).count >= 2)
                // Retention that keeps nothing lets them go, and their assets with them.
                var settings = HistorySettings(interval: 600, budgetFraction: 0)
                (settings.keepAll, settings.keepDaily, settings.keepLast, settings.floorBytes) = (0, 0, 0, 0)
                #expect(try VersionRetention.prune(in: m.database, settings: settings).deleting.count >= 2)
                #expect(eventually(10) { assetFiles(db).isEmpty }, "\(assetFiles(db))")
                // A folder of attachments (and a binary note) removed with rm -r.
                #expect(mkdir(m.path("d"), 0o755) == 0)
                #expect(mkdir(m.path("d/e"), 0o755) == 0)
                #expect(writeBytes(m.path("d/a.bin"), Array(big.prefix(100_000))) == 0)
                #expect(writeBytes(m.path("d/e/b.pdf"), Array(big.suffix(200_000))) == 0)
                #expect(writeBytes(m.path("d/e/latin.md"), Array("caf\u{e9}".unicodeScalars.map { UInt8($0.value) })) == 0)
                #expect(eventually(10) { assetFiles(db).count >= 3 }, "\(assetFiles(db))")
                let rm = try run(["/bin/rm", "-r", m.path("d")])
                #expect(rm.status == 0, "\(rm)")
                #expect(try VersionRetention.prune(in: m.database, settings: settings).deleting.count >= 3)
                #expect(eventually(10) { assetFiles(db).isEmpty }, "\(assetFiles(db))")
            }
            let database = try RecordDatabase(path: db)
            defer { try? database.close() }
            let report = try database.check()
            #expect(report.problems.isEmpty, "\(report.problems)")
            #expect(assetFiles(db).isEmpty)
        }
    }
}
