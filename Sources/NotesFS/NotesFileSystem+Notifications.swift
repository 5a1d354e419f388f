import FUSE
import Foundation
import RecordStore

/// The notification thread: sends the kernel the invalidations and page-cache stores queued in
/// the outbox (never from a request handler, and holding no lock: FUSE-NOTES.md), applies outside
/// changes that arrived while no request came, and saves again the files whose save failed.
extension NotesFileSystem {
    /// How long the notification thread gathers notifications after a wake-up (well under the
    /// second within which changes made elsewhere must show).
    static let notificationBatchDelay: Duration = .milliseconds(2)

    /// The notification thread's loop (``notifications``), until it is stopped.
    func runNotifications(_ worker: BackgroundWorker) {
        var lastRetry = ContinuousClock.now
        while let round = worker.next() {
            // After a wake, a moment's wait gathers the notifications of the next few requests
            // (a create's page-cache store, say) into one pass: one wake-up for many of them.
            if round == .woken, !worker.pause(Self.notificationBatchDelay) { return }
            if ContinuousClock.now - lastRetry >= Self.failedSaveRetryInterval {
                lastRetry = .now
                if state.withLock({ !$0.files.failedSaves.isEmpty }) { retryFailedSaves() }
            }
            // External changes wake it without draining: apply them here so the kernel hears soon.
            state.withLock { applyPendingChanges(&$0) }
            let (work, queued) = outbox.withLock { outbox in
                defer { outbox.items = [] }
                return (outbox.items, outbox.queued)
            }
            defer { notificationsSent.withLock { $0 = max($0, queued) } }
            guard let notifier = notifierBox.withLock({ $0 }) else { continue }
            for item in work {
                switch item {
                case .entry(let parent, let name): try? notifier.invalidateEntry(parent: parent, name: FileName(name))
                case .inode(let inode): try? notifier.invalidateInode(inode)
                case .attributes(let inode): try? notifier.invalidateInode(inode, offset: -1)
                case .store(let inode, let tag, let bytes): store(inode, tag: tag, bytes: bytes, notifier)
                case .delete(let parent, let child, let name):
                    do {
                        try notifier.notifyDelete(parent: parent, child: child, name: FileName(name))
                    } catch {
                        try? notifier.invalidateEntry(parent: parent, name: FileName(name))
                    }
                }
            }
        }
    }
}
