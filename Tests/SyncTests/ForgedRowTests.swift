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

/// Rows forged on the server (written with SQL, as anyone who can write to the server database
/// could): each is set aside with its reason, the rest of its page applies, pushes go on, and no
/// file outside the database is read, written or removed.
@Suite(.tags(.postgres), .needsPostgres) struct ForgedRowTests {
    /// Inserts a row as a hostile writer would: `payload` is the JSON text of the `payload` column.
    func forge(_ server: String, name: String, type: String, payload: String?, origin: String = "forger/1") throws {
        try Connection(server).execute(
            "INSERT INTO notesfs_records VALUES ($1, $2, nextval('notesfs_seq'), $3::boolean, $4::jsonb, $5)",
            [name, type, payload == nil ? "true" : "false", payload, origin])
    }

    /// A note payload in the server's form, with `extra` fields (JSON members) added.
    func notePayload(title: String, text: String, extra: String = "", modified: String = "1700000000") -> String {
        #"{"modified":"\#(modified)","fields":{"title":{"type":"string","value":"\#(title)"},"text":{"type":"string","value":"\#(text)"}\#(extra)}}"#
    }

    /// A file outside every database, whose bytes and times must never change.
    func makeBystander() throws -> (path: String, bytes: Data, mtime: Int) {
        let path = machinesDirectory + "/bystander-" + UUID().uuidString
        let bytes = Data("secret of someone else\n".utf8)
        try bytes.write(to: URL(fileURLWithPath: path))
        chmod(path, 0o600)
        var info = stat()
        stat(path, &info)
        return (path, bytes, Int(info.st_mtim.tv_sec) * 1_000_000_000 + Int(info.st_mtim.tv_nsec))
    }

    func expectUntouched(_ bystander: (path: String, bytes: Data, mtime: Int), sourceLocation: SourceLocation = #_sourceLocation) {
        var info = stat()
        #expect(stat(bystander.path, &info) == 0, "the bystander file was removed", sourceLocation: sourceLocation)
        #expect(FileManager.default.contents(atPath: bystander.path) == bystander.bytes, sourceLocation: sourceLocation)
        #expect(Int(info.st_mtim.tv_sec) * 1_000_000_000 + Int(info.st_mtim.tv_nsec) == bystander.mtime, sourceLocation: sourceLocation)
    }

    /// The database reopened by a new process-like instance: every record readable, fsck clean.
    func expectSound(_ machine: Machine, notes: Set<String>, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let reopened = try RecordDatabase(path: machine.path, backgroundThread: false)
        let titles = try reopened.metadata(ofType: Note.recordType).map { try Note(record: reopened.record(for: $0.recordID)).title }
        #expect(Set(titles) == notes, sourceLocation: sourceLocation)
        let fsck = try notesfs(machine.path, ["fsck"])
        #expect(fsck.status == 0, "\(fsck.out)\(fsck.stderr)", sourceLocation: sourceLocation)
        #expect(!FileManager.default.fileExists(atPath: machine.path + "/lost+found"), sourceLocation: sourceLocation)
    }

    @Test func anAssetHashThatIsAPathIsSetAsideAndNothingOutsideIsTouched() throws {
        let (server, machines) = try makeMachines(2)
        let (a, b) = (machines[0], machines[1])
        let bystander = try makeBystander()
        let relative = String(repeating: "../", count: 12) + bystander.path.dropFirst()
        try a.save([note("Before", id: "before", text: "one\n")])
        try a.sync()
        try forge(
            server, name: "evil", type: "Attachment",
            payload:
                #"{"fields":{"name":{"type":"string","value":"passwd"},"content":{"type":"asset","value":{"sha256":"\#(relative)","size":"23"}}}}"#
        )
        try forge(server, name: "after", type: "Note", payload: notePayload(title: "After", text: "two"))

        let run = try notesfs(b.path, ["sync"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(
            run.stderr.contains("server record set aside: evil: field content: asset hash is not 64 lower-case hex digits"), "\(run.stderr)"
        )
        try b.database.refresh()
        #expect(!b.has("evil"))
        #expect(try b.note("after").text == "two")
        // Local work after the forged row survives a reopen; its push goes on.
        try b.save([note("Local", id: "local", text: "mine\n")])
        try b.sync()
        try a.sync()
        #expect(try a.note("local").text == "mine\n")
        let status = try notesfs(b.path, ["sync", "status"])
        #expect(status.out.contains("server records set aside: 1"), "\(status.out)")
        #expect(status.out.contains("evil (Attachment, server version"), "\(status.out)")
        // The asset collector and an export find nothing of it either.
        _ = try b.database.collectOrphanedAssets(olderThan: 0)
        let export = try notesfs(b.path, ["export", b.path + "-export"])
        #expect(export.status == 0, "\(export.stderr)")
        expectUntouched(bystander)
        try expectSound(b, notes: ["Before", "After", "Local"])
    }

    @Test func aDateTheStoreCannotReadBackIsSetAsideAndLaterWorkSurvivesAReopen() throws {
        let (server, machines) = try makeMachines(1)
        let b = machines[0]
        try forge(server, name: "inf-modified", type: "Note", payload: notePayload(title: "Inf", text: "x", modified: "inf"))
        try forge(
            server, name: "inf-field", type: "Note",
            payload: notePayload(title: "Field", text: "x", extra: #","due":{"type":"date","value":"-inf"}"#))
        try forge(server, name: "good", type: "Note", payload: notePayload(title: "Good", text: "fine"))
        let report = try b.sync()
        #expect(Set(report.setAside.map(\.recordName)) == ["inf-modified", "inf-field"])
        #expect(b.database.metadata(for: RecordID(recordName: "inf-modified")) == nil)
        try b.save([note("Later", id: "later", text: "after the forged rows\n")])
        var later = try b.note("later")
        later.title = "Renamed"
        try b.save([later.record])
        try expectSound(b, notes: ["Good", "Renamed"])
        let state = try #require(try SyncState.load(databasePath: b.path))
        #expect(state.setAside["inf-modified"]?.reason.contains("not a finite time") == true, "\(state.setAside)")
    }

    /// A field this notesfs cannot decode (a newer notesfs's type, a number where a string must be)
    /// no longer stops every client: the good rows of the page apply, and pushes go on.
    @Test func aFieldThisVersionCannotDecodeDoesNotStopSync() throws {
        let (server, machines) = try makeMachines(2)
        let (a, b) = (machines[0], machines[1])
        try forge(
            server, name: "new-type", type: "Note",
            payload: notePayload(title: "T", text: "x", extra: #","where":{"type":"location","value":"52,13"}"#))
        try forge(
            server, name: "int-title", type: "Note",
            payload: #"{"fields":{"title":{"type":"int64","value":5},"text":{"type":"string","value":"y"}}}"#)
        try forge(
            server, name: "deep", type: "Note",
            payload: notePayload(
                title: "Deep", text: "x",
                extra: #","l":"# + String(repeating: #"{"type":"list","value":["#, count: 70) + String(repeating: "]}", count: 70)))
        try forge(server, name: "good", type: "Note", payload: notePayload(title: "Good", text: "fine"))
        try b.save([note("Mine", id: "mine", text: "from b\n")])
        let run = try notesfs(b.path, ["sync"])
        #expect(run.status == 0, "\(run.stderr)")
        try b.database.refresh()
        #expect(try b.note("good").text == "fine")
        #expect(!b.has("new-type") && !b.has("int-title") && !b.has("deep"))
        try a.sync()
        #expect(try a.note("mine").text == "from b\n")
        let state = try #require(try SyncState.load(databasePath: b.path))
        #expect(Set(state.setAside.keys) == ["new-type", "int-title", "deep"])
        #expect(state.setAside["int-title"]?.reason == "field title cannot be decoded")
        let json = try notesfs(b.path, ["sync", "status", "--json"])
        #expect(json.out.contains(#""recordName": "int-title""#) || json.out.contains(#""recordName":"int-title""#), "\(json.out)")
    }

    /// A row set aside by an older reader is fetched again by a newer one, even when the server
    /// never changes it (its seq is behind the client's).
    @Test func aNewerReaderFetchesWhatAnOlderOneSetAside() throws {
        let (server, machines) = try makeMachines(1)
        let b = machines[0]
        try forge(
            server, name: "later-readable", type: "Note",
            payload: notePayload(title: "L", text: "x", extra: #","n":{"type":"int64","value":7}"#))
        try b.sync()
        #expect(!b.has("later-readable"))
        // The row as a newer writer meant it (same seq), and this client as one whose reader is older.
        try Connection(server).execute(
            "UPDATE notesfs_records SET payload = $1::jsonb WHERE record_name = 'later-readable'",
            [notePayload(title: "L", text: "x", extra: #","n":{"type":"int64","value":"7"}"#)])
        var state = try #require(try SyncState.load(databasePath: b.path))
        state.setAside["later-readable"]?.reader = RecordPayload.readerVersion - 1
        try state.save(databasePath: b.path)
        try b.sync()
        try b.database.refresh()
        #expect(try b.database.record(for: RecordID(recordName: "later-readable"))["n"] == .int64(7))
        #expect(try SyncState.load(databasePath: b.path)?.setAside.isEmpty == true)
    }

    @Test func aRowThatChangesARecordsTypeIsSetAsideAndTheLocalRecordKept() throws {
        let (server, machines) = try makeMachines(2)
        let (a, b) = (machines[0], machines[1])
        try a.save([note("Plan", id: "plan", text: "one\n")])
        try syncAll(machines)
        try Connection(server).execute(
            "UPDATE notesfs_records SET record_type = 'Folder', seq = nextval('notesfs_seq'), payload = $1::jsonb WHERE record_name = 'plan'",
            [#"{"fields":{"name":{"type":"string","value":"Hijack"}}}"#])
        try b.sync()
        #expect(try b.note("plan").text == "one\n")
        let aside = try #require(try SyncState.load(databasePath: b.path)?.setAside["plan"])
        #expect(aside.reason.contains("the server's version is a Folder, the local record a Note"), "\(aside.reason)")
        // An edit of it waits (it would overwrite a version never merged here), and says so.
        try b.append("two\n", to: "plan")
        #expect(try b.sync().failures.map(\.recordName) == ["plan"])
        #expect(try serverRows(server)["plan"] != nil)
    }

    /// A reference to a record the server has not sent (yet) is set aside, then applied once it comes.
    @Test func aReferenceToAMissingRecordWaitsForIt() throws {
        let (server, machines) = try makeMachines(1)
        let b = machines[0]
        try forge(
            server, name: "linker", type: "Note",
            payload: notePayload(
                title: "Linker", text: "x", extra: #","see":{"type":"reference","value":{"recordName":"ghost","action":"none"}}"#))
        try forge(server, name: "plain", type: "Note", payload: notePayload(title: "Plain", text: "y"))
        try b.sync()
        #expect(!b.has("linker") && b.has("plain"))
        #expect(try SyncState.load(databasePath: b.path)?.setAside["linker"]?.awaitsRecord == true)
        try forge(server, name: "ghost", type: "Note", payload: notePayload(title: "Ghost", text: "z"))
        try b.sync()
        #expect(b.has("linker") && b.has("ghost"))
        #expect(try SyncState.load(databasePath: b.path)?.setAside.isEmpty == true)
    }

    /// A note whose "folder" is a note, and folders that are each other's parent: applied, each
    /// reachable from the root (the note in Recovered, the cycle broken), nothing hangs.
    @Test func foldersThatAreNotFoldersAndParentCyclesEndReachable() throws {
        let (server, machines) = try makeMachines(1)
        let b = machines[0]
        let ref = { (name: String) in #"{"type":"reference","value":{"recordName":"\#(name)","action":"deleteSelf"}}"# }
        try forge(server, name: "host", type: "Note", payload: notePayload(title: "Host", text: "h"))
        try forge(server, name: "guest", type: "Note", payload: notePayload(title: "Guest", text: "g", extra: #","folder":"# + ref("host")))
        try forge(
            server, name: "x", type: "Folder", payload: #"{"fields":{"name":{"type":"string","value":"X"},"parent":"# + ref("y") + "}}")
        try forge(
            server, name: "y", type: "Folder", payload: #"{"fields":{"name":{"type":"string","value":"Y"},"parent":"# + ref("x") + "}}")
        try b.sync()
        let guest = try b.database.record(for: RecordID(recordName: "guest"))
        #expect(guest["folder"]?.referenceValue?.recordID.recordName == SyncEngine.recoveredFolderName)
        let tree = try notesfs(b.path, ["export", b.path + "-tree"])
        #expect(tree.status == 0, "\(tree.stderr)")
        #expect(FileManager.default.fileExists(atPath: b.path + "-tree/Recovered/Guest.md"))
        #expect(FileManager.default.fileExists(atPath: b.path + "-tree/X") || FileManager.default.fileExists(atPath: b.path + "-tree/Y"))
    }

    /// A payload larger than a client reads is set aside unread (the server computes the size; the
    /// client never receives the bytes); payloads up to it, many to a page, apply.
    @Test func anOversizedPayloadIsSetAsideUnread() throws {
        let (server, machines) = try makeMachines(1)
        let b = machines[0]
        try Connection(server).execute(
            """
            INSERT INTO notesfs_records VALUES ('big', 'Note', nextval('notesfs_seq'), false,
                jsonb_build_object('fields', jsonb_build_object('text', jsonb_build_object('type', 'string', 'value', repeat('a', $1::int)))), 'f/1')
            """, [String(ServerContainer.payloadLimit + 1)])
        let megabyte = String(repeating: "b", count: 1 << 20)
        for i in 0..<20 { try forge(server, name: "m\(i)", type: "Note", payload: notePayload(title: "M\(i)", text: megabyte)) }
        let report = try b.sync()
        #expect(report.setAside.map(\.recordName) == ["big"])
        #expect(report.setAside.first?.reason.contains("over the \(ServerContainer.payloadLimit) this notesfs reads") == true)
        #expect(try b.notes().count == 20)
        #expect(try b.notes().allSatisfy { $0.text == megabyte })
    }
}
