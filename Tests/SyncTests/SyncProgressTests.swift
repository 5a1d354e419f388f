import Foundation
import RecordStore
import TestSupport
import Testing

@testable import Sync

/// A long sync shows its progress on a terminal (records and bytes, each direction), and nothing
/// when its output is not one.
@Suite(.tags(.postgres), .needsPostgres) struct SyncProgressTests {
    @Test func aFirstSyncShowsProgressOnATerminalOnly() throws {
        let (_, machines) = try makeMachines(2)
        let (a, b) = (machines[0], machines[1])
        try a.save((0..<450).map { note("N\($0)", id: "n\($0)", text: String(repeating: "line \($0)\n", count: 20)) })
        // `script` gives the command a terminal (bsdutils, installed with util-linux's tools).
        let command = "\(notesfsBinary) --db \(shellQuoted(a.path)) sync"
        let up = try run("/usr/bin/script", ["-qec", command, "/dev/null"], mergingErrors: true)
        #expect(up.status == 0, "\(up.out)")
        #expect(up.out.contains("sync: pushed [") && up.out.contains("450/450") && up.out.contains(" KB"), "\(up.out)")
        let down = try run(
            "/usr/bin/script", ["-qec", "\(notesfsBinary) --db \(shellQuoted(b.path)) sync", "/dev/null"], mergingErrors: true)
        #expect(down.out.contains("sync: fetched [") && down.out.contains("450/450"), "\(down.out)")
        // Not a terminal: no bar.
        try a.save([note("More", id: "more", text: "x\n")])
        let quiet = try notesfs(a.path, ["sync"])
        #expect(!quiet.stderr.contains("[#") && !quiet.stderr.contains("[."), "\(quiet.stderr)")
    }
}
