import Foundation
import Notes
import RecordStore
import TestSupport
import Testing

/// `kill -9` of a command in the middle of a save that keeps a version: the version is committed
/// with the save or not at all, so every save that returned is in the history (or is the note).
@Suite struct HistoryKillTests {
    @Test(.tags(.slow), .notInFastRuns) func aKilledSaveNeverLosesItsPromisedVersion() throws {
        let db = makeDatabasePath("history-kill")
        let environment = ["NOTESFS_HISTORY_INTERVAL": "0"]  // every save keeps the state it replaces
        try notesfs(["note", "new", "N", "--text", "text 0\n"], db: db, environment: environment)
        var completed: [String] = ["text 0\n"]
        // How long a save takes here, to kill the next ones at random moments within it.
        let start = Date()
        try notesfs(["note", "new", "N", "--force", "--text", "text 1\n"], db: db, environment: environment)
        completed.append("text 1\n")
        let duration = max(Date().timeIntervalSince(start), 0.01)
        var generator = SystemRandomNumberGenerator()
        for i in 2..<32 {
            let text = "text \(i)\n" + String(repeating: "line \(i)\n", count: 50 * i)  // large: its own record file
            let process = Process()
            process.executableURL = URL(fileURLWithPath: notesfsBinary)
            process.arguments = ["--db", db, "note", "new", "N", "--force", "--text", text]
            var env = ProcessInfo.processInfo.environment
            env.merge(environment) { _, new in new }
            process.environment = env
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            usleep(UInt32(Double.random(in: 0...(duration * 1.2), using: &generator) * 1_000_000))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            if process.terminationReason == .exit && process.terminationStatus == 0 { completed.append(text) }
        }
        let database = try RecordDatabase(path: db, backgroundThread: false)
        let note = try #require(database.metadata(ofType: Note.recordType).first)
        let current = try Note(record: database.record(for: note.recordID)).text
        var held: [String] = [current]
        for version in VersionHistory.versions(ofNoteNamed: note.recordID.recordName, in: database) {
            let whole = try VersionHistory.fullVersion(version.recordID, in: database)
            #expect(whole.size == Int64(whole.text?.utf8.count ?? -1))  // whole, never half
            held.append(whole.text ?? "")
        }
        // Every save that returned is there: the current text or a version; and each text once.
        #expect(Set(completed).isSubset(of: Set(held)), "\(completed.count) returned, \(held.count) held")
        #expect(Set(held).count == held.count)
        #expect(try database.check().problems.isEmpty)
    }
}
