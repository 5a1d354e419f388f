import FUSE
import Foundation
import Notes
import RecordStore

extension NotesFileSystem {
    /// The mount prunes note history (``VersionRetention``) this long after it starts, then at this interval.
    static let firstPruneDelay: Duration = .seconds(60)
    static let pruneInterval: Duration = .seconds(3600)

    /// Starts the thread that prunes note history in the background while the mount runs (none
    /// for a read-only database; stopped by `destroy`). Each prune is one atomic modify of
    /// deletes: a crash or an unmount in the middle leaves all of it or none.
    func startPruning() {
        guard !database.isReadOnly else { return }
        pruning.start { [weak self] worker in
            guard worker.pause(Self.firstPruneDelay) else { return }
            repeat {
                guard let fileSystem = self else { return }
                fileSystem.pruneHistory()
            } while worker.next() != nil
        }
    }

    /// Prunes note history now (logged; a failure is tried again at the next interval).
    func pruneHistory() {
        do {
            let plan = try VersionRetention.prune(in: database, settings: .fromEnvironment())
            if !plan.deleting.isEmpty {
                Log.info("history: pruned \(plan.deleting.count) versions (\(plan.versionBytesBefore - plan.versionBytesAfter) bytes)")
            }
        } catch {
            Log.warning("history: pruning failed: \(error)")
        }
    }
}
