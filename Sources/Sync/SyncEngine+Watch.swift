import Foundation
import Postgres
import RecordStore

extension SyncEngine {
    /// Waits until another client pushes (`LISTEN`/`NOTIFY`), the local database changes, or
    /// `timeout` seconds pass (the polling fallback); returns at once if one already happened.
    ///
    /// - Throws: ``SyncError/server(_:)`` when the connection broke.
    public func waitForChanges(since localToken: ChangeToken, timeout: Double) throws(SyncError) {
        do {
            if !isListening {
                try container.connection.listen(ServerSchema.channel)
                isListening = true
            }
            let deadline = Date().addingTimeInterval(timeout)
            while Date() < deadline {
                if try !container.connection.notifications(waitingUpTo: min(0.25, timeout)).isEmpty { return }
                try? database.refresh()
                if database.currentToken != localToken { return }
            }
        } catch { throw .server(error) }
    }
}
