import FUSE
import NotesFS
import Sync
import Synchronization

/// The background sync of a mount whose database has a server (`sync init`), unless `-o nosync`:
/// started once the mount serves (after the daemon's fork: threads do not survive one), woken by
/// this mount's own commits, stopped after the loop ends. Errors go to the log (and, by the
/// engine, to `sync status`); they never touch the mount.
enum MountSync {
    /// Starts the sync thread; nil when this mount does not sync.
    static func start(databasePath: String, fileSystem: NotesFileSystem, options: CommandLineOptions) -> BackgroundSync? {
        guard !options.noBackgroundSync, BackgroundSync.hasServer(databasePath: databasePath), !fileSystem.isReadOnly else { return nil }
        let sync: BackgroundSync
        do { sync = try BackgroundSync() } catch {
            Log.error("sync: cannot start: \(error)")
            return nil
        }
        fileSystem.observeDatabase { change in if !change.isExternal { sync.wake() } }
        fileSystem.onWriterClosed { sync.wake() }
        let lastError = LastError()
        let databasePath = fileSystem.recordDatabase.path
        let deferring: @Sendable () -> Set<String> = {
            let names = fileSystem.recordsBeingWritten()
            OpenWriters.publish(names, databasePath: databasePath)  // for a `notesfs sync` beside the mount
            return names
        }
        sync.start(database: fileSystem.recordDatabase, deferring: deferring) { result in
            switch result {
            case .success(let report):
                if lastError.clear() { Log.info("sync: working again") }
                for entry in report.decided {
                    Log.info(
                        "sync: \(entry.recordName): \(entry.key) changed on two machines: kept '\(entry.kept)' (the change that reached the server last), dropped '\(entry.dropped)'"
                    )
                }
                for entry in report.setAside.prefix(SyncReport.setAsideShownLimit) {
                    Log.error("sync: server record set aside: \(entry.recordName): \(entry.reason)")
                }
                if report.setAside.count > SyncReport.setAsideShownLimit {
                    Log.error(
                        "sync: \(report.setAside.count - SyncReport.setAsideShownLimit) more server records set aside (see sync status)")
                }
                for notice in report.notices { Log.info("sync: \(notice)") }
                if report.pushed + report.fetched > 0 || !report.conflictCopies.isEmpty {
                    Log.info("sync: \(report.pushed) pushed, \(report.fetched) fetched, \(report.conflictCopies.count) conflict copies")
                }
            case .failure(let error):
                // Logged when it changes, not at every retry of a server that stays down.
                if lastError.replace(error.description) { Log.error("sync: \(error) (retrying with backoff)") }
            }
        }
        Log.info("sync: background sync started (-o nosync turns it off)")
        return sync
    }
}

/// The last sync error logged; guarded by its mutex (set by the sync thread only, but `Sendable`
/// closures need a checked box).
private final class LastError: Sendable {
    private let text = Mutex<String?>(nil)

    /// Sets it; whether it differs from the one before.
    func replace(_ new: String) -> Bool {
        text.withLock { old in
            defer { old = new }
            return old != new
        }
    }

    /// Clears it; whether there was one.
    func clear() -> Bool {
        text.withLock { old in
            defer { old = nil }
            return old != nil
        }
    }
}
