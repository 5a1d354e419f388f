import Foundation
import TestSupport
import Testing

/// `notesfs DB MNT -f [options]` over a machine's database: a mount that syncs in the background
/// (unless `-o nosync`). Its watchdog allows for the longest wait of a sync test (90 s for mounts
/// to converge after a server comes back) on a loaded machine.
func syncedMount(_ database: String, options: [String] = [], environment: [String: String] = [:]) throws -> ChildMount {
    try ChildMount(databasePath: database, arguments: options, environment: environment, timeout: 600)
}

/// Live mounts of `count` machines on one new server database (on `testCluster`, else the
/// shared one), each mount syncing in the background; `body` gets them with their machines, and
/// they are unmounted after it.
func withSyncedMounts(
    _ count: Int, on testCluster: TestCluster? = nil, _ body: (_ mounts: [ChildMount], _ machines: [Machine]) throws -> Void
) throws {
    let (_, machines) = try makeMachines(count, on: testCluster)
    var mounts: [ChildMount] = []
    defer { for mount in mounts { mount.close() } }
    for machine in machines {
        mounts.append(try syncedMount(machine.path))
    }
    try body(mounts, machines)
}

/// Polls `condition` in each of `mounts` until it holds (up to `seconds` in all, a generous bound
/// for a loaded machine, never a measured time); records an issue naming each mount where it does
/// not, with the end of that daemon's log. Returns whether it held everywhere.
@discardableResult
func expectEverywhere(
    _ mounts: [ChildMount], _ what: String, within seconds: Double = 10, sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: (ChildMount) -> Bool
) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    var held = true
    for mount in mounts where !eventually(max(0.1, deadline.timeIntervalSinceNow), { condition(mount) }) {
        // The database's own root beside the mount's: which of the two missed the change.
        let stored = (try? notesfs(mount.databasePath, ["ls"]))?.out ?? "?"
        let shown = (try? FileManager.default.contentsOfDirectory(atPath: mount.path))?.sorted().joined(separator: "\n") ?? "?"
        // A listing the debug build found out of step with a change, anywhere in the log.
        let listings = mount.log.split(separator: "\n").filter { $0.contains("listings after change") }.prefix(5)
        Issue.record(
            """
            \(what): not seen in \(mount.path) within \(seconds) s; the database's root:
            \(stored)
            the mount's root:
            \(shown)
            its listings' problems: \(listings.isEmpty ? "none" : listings.joined(separator: "\n"))
            its log ends:
            \(mount.logTail)
            """, sourceLocation: sourceLocation)
        held = false
    }
    return held
}
