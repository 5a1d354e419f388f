import Foundation
import Postgres
import RecordStore

extension SyncEngine {
    /// Starts listening for other clients' pushes (`LISTEN`), unless already: call it before a
    /// sync, so that a push made while that sync runs still wakes the next wait.
    ///
    /// - Throws: ``SyncError/server(_:)``.
    public func startListening() throws(SyncError) {
        guard !isListening else { return }
        do { try container.connection.listen(ServerSchema.channel) } catch { throw .server(error) }
        isListening = true
    }

    /// Waits until another client pushes (a `NOTIFY` from another connection: this one's own are
    /// skipped), the local database moves past `localToken` (checked every 0.25 s after a
    /// `refresh`), `wakeFD` becomes readable (the caller drains it), or `timeout` seconds pass
    /// (the polling fallback); returns at once if one already happened.
    ///
    /// - Throws: ``SyncError/server(_:)`` when the connection broke.
    public func waitForChanges(since localToken: ChangeToken, timeout: Double, wakeFD: Int32? = nil) throws(SyncError) {
        try startListening()
        let connection = container.connection
        let deadline = Date().addingTimeInterval(timeout)
        do {
            while Date() < deadline {
                let slice = min(0.25, max(0, deadline.timeIntervalSinceNow))
                let received = try connection.notifications(waitingUpTo: slice, wakeFD: wakeFD)
                if received.contains(where: { $0.senderPID != connection.backendPID }) { return }
                if let wakeFD, Self.isReadable(wakeFD) { return }
                try? database.refresh()
                if database.currentToken != localToken { return }
            }
        } catch { throw .server(error) }
    }

    /// Whether `fd` has something to read now (`poll` with no wait).
    static func isReadable(_ fd: Int32) -> Bool {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&poller, 1, 0) > 0
    }
}
