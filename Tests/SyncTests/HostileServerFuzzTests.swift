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

/// A server that writes random hostile rows (valid JSON, hostile everything else: types, sizes,
/// names, references, dates, hashes) while a mount syncs in the background: afterwards no file
/// outside the database was touched, the daemon is alive, fsck is clean and the local notes are
/// as they were.
@Suite(.tags(.mount, .postgres), .needsFUSE, .needsPostgres) struct HostileServerFuzzTests {
    static let localNames = ["mine", "m0", "m1", "m2", "m3", "m4"]

    /// One random row: (name, type, deleted, payload JSON text). Rows naming a local record are
    /// always ones that must be refused (another type, or a value the store cannot hold), so the
    /// local notes must come out exactly as they were.
    static func row(_ random: inout SeededGenerator, round: Int) -> (String, String, Bool, String?) {
        func pick<T>(_ items: [T]) -> T { items[Int(random.next() % UInt64(items.count))] }
        let names = [
            "f\(round % 7)", "n\(round % 13)", "../../etc/passwd", "/abs", ".", "..", "a/b", String(repeating: "x", count: 5000),
            "nul\u{1}", "\u{202E}rtl", AppliedPageMarker.recordName, SyncEngine.recoveredFolderName, "é\u{301}",
        ]
        let hostile = random.next() % 4 == 0
        let name = hostile ? pick(localNames) : pick(names)
        let types = ["Note", "Folder", "Attachment", "Symlink", "SpecialFile", "Link", "Evil", AppliedPageMarker.recordType]
        var type = pick(types)
        if hostile, name == "mine", type == "Folder" { type = "Note" }  // the local folder: never a Folder row
        if hostile, name != "mine", type == "Note" { type = "Folder" }  // the local notes: never a Note row
        if random.next() % 10 == 0 { return (name, type, true, nil) }
        let hashes = [
            "../../../../../etc/passwd", String(repeating: "A", count: 64), "", String(repeating: "0", count: 64),
            String(repeating: "f", count: 63) + "/",
        ]
        let dates = [#""inf""#, #""nan""#, #""-inf""#, #""1e400""#, #""-1""#, #""abc""#, "12", #""1700000000""#, "null"]
        let references = ["f\(round % 7)", "n\(round % 5)", "ghost", "", "mine", name, "../x"]
        func value(_ depth: Int) -> String {
            switch random.next() % 12 {
            case 0: return #"{"type":"string","value":"\#(pick(["", "text", "\\u0000", "a\\nb", "🧪"]))"}"#
            case 1: return #"{"type":"int64","value":\#(pick([#""5""#, "5", #""99999999999999999999""#, #""x""#]))}"#
            case 2: return #"{"type":"double","value":\#(pick([#""1.5""#, #""nan""#, #""inf""#, "2"]))}"#
            case 3: return #"{"type":"date","value":\#(pick(dates))}"#
            case 4: return #"{"type":"bytes","value":"\#(pick(["AAEC", "!!!", ""]))"}"#
            case 5:
                return
                    #"{"type":"asset","value":{"sha256":"\#(pick(hashes))","size":\#(pick([#""11""#, #""-1""#, #""99999999999""#, "3"]))}}"#
            case 6:
                return
                    #"{"type":"reference","value":{"recordName":"\#(pick(references))","action":"\#(pick(["deleteSelf", "none", "x"]))"}}"#
            case 7: return depth > 3 ? "{}" : #"{"type":"list","value":[\#(value(depth + 1)),\#(value(depth + 1))]}"#
            case 8: return #"{"type":"location","value":"52,13"}"#
            case 9: return pick(["null", "[]", "7", #""s""#])
            case 10: return #"{"type":"bool","value":\#(pick(["true", #""yes""#]))}"#
            default: return #"{"type":"string","value":"\#(String(repeating: "long ", count: 2000))"}"#
            }
        }
        var fields: [String] = []
        for key in ["title", "text", "name", "folder", "parent", "content", "target", "mode", "extra"] where random.next() % 2 == 0 {
            fields.append(#""\#(key)":\#(value(0))"#)
        }
        let shapes = [
            #"{"modified":\#(pick(dates)),"created":\#(pick(dates)),"fields":{\#(fields.joined(separator: ","))}}"#,
            #"{"fields":{\#(fields.joined(separator: ","))}}"#, #"{"fields":[]}"#, "[]", "null", #""text""#,
        ]
        return (name, type, false, random.next() % 5 == 0 ? pick(shapes) : shapes[random.next() % 2 == 0 ? 0 : 1])
    }

    @Test(arguments: [2026, 7, 99] as [UInt64]) func randomHostileRowsWhileAMountSyncsCostNothing(seed: UInt64) throws {
        let (server, machines) = try makeMachines(1)
        let a = machines[0]
        // Local records: a folder "mine" with five notes, synced.
        try a.save([folder("Mine", id: "mine")] + (0..<5).map { note("M\($0)", id: "m\($0)", text: "local \($0)\n", folder: "mine") })
        try a.sync()
        let before = try a.contents()
        let bystander = NSTemporaryDirectory() + "notesfs-bystander-" + UUID().uuidString
        try Data("not yours\n".utf8).write(to: URL(fileURLWithPath: bystander))
        let bystanderBefore = try FileManager.default.attributesOfItem(atPath: bystander)[.modificationDate] as? Date

        let mount = try syncedMount(a.path)
        defer { mount.close() }
        let connection = try Connection(server)
        var random = SeededGenerator(state: seed)
        let rounds = 300
        for round in 0..<rounds {
            let (name, type, deleted, payload) = Self.row(&random, round: round)
            do {
                try connection.execute(
                    """
                    INSERT INTO notesfs_records VALUES ($1, $2, nextval('notesfs_seq'), $3::boolean, $4::jsonb, 'fuzz/\(round)')
                    ON CONFLICT (record_name) DO UPDATE SET record_type = EXCLUDED.record_type, seq = EXCLUDED.seq,
                        deleted = EXCLUDED.deleted, payload = EXCLUDED.payload, origin = EXCLUDED.origin
                    """, [name, type, deleted ? "true" : "false", payload])
            } catch {
                continue  // jsonb refused it (a NUL escape): the server never holds such a row
            }
            if round % 10 == 9 {
                try connection.notify(ServerSchema.channel, payload: "\(round)")
                usleep(50_000)
            }
        }
        let last = try #require(Int64(try connection.execute("SELECT max(seq) AS s FROM notesfs_records").value(0, "s") ?? ""))
        #expect(
            eventually(60) { ((try? SyncState.load(databasePath: a.path, includingRecords: false))?.serverSeq ?? 0) >= last },
            "the mount's sync did not get through the rows: \(mount.log)")
        #expect(mount.process.isRunning && isMounted(mount.path), "\(mount.log)")
        // The local notes, through the mount and in the store.
        // (A server note may take a local note's name, "the earliest created keeps it", so by record name.)
        var seen = Set<String>()
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: mount.path + "/Mine")) ?? [] {
            guard let name = mount.recordName("Mine/" + entry), name.hasPrefix("m"), let i = Int(name.dropFirst()) else { continue }
            #expect(mount.read("Mine/" + entry) == "local \(i)\n", "\(entry)")
            seen.insert(name)
        }
        #expect(seen == ["m0", "m1", "m2", "m3", "m4"], "\(mount.log)")
        try a.database.refresh()
        let after = try a.contents()
        for (name, contents) in before { #expect(after[name] == contents, "\(name)") }
        let fsck = try notesfs(a.path, ["fsck"])
        #expect(fsck.status == 0, "\(fsck.out)\(fsck.stderr)")
        #expect(try String(contentsOfFile: bystander, encoding: .utf8) == "not yours\n")
        #expect(try FileManager.default.attributesOfItem(atPath: bystander)[.modificationDate] as? Date == bystanderBefore)
        #expect(FileManager.default.fileExists(atPath: "/etc/passwd"))
        let status = try notesfs(a.path, ["sync", "status"])
        #expect(status.out.contains("server records set aside: "), "\(status.out)")
        // Every file the database holds is inside it.
        let listing = try run("/usr/bin/find", [a.path, "-type", "l"], mergingErrors: true)
        #expect(listing.out.isEmpty, "symbolic links in the database: \(listing.out)")
    }
}
