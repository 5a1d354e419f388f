import CPostgres
import Foundation
import POSIX

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// A `NOTIFY` another session sent on a channel this connection listens to.
public struct Notification: Sendable, Equatable {
    public var channel: String
    public var payload: String
    /// The backend process that sent it (`be_pid`).
    public var senderPID: Int32
}

extension Connection {
    /// Starts listening on `channel` (`LISTEN`).
    ///
    /// - Throws: ``PostgresError``.
    public func listen(_ channel: String) throws(PostgresError) {
        try execute("LISTEN " + quotedIdentifier(channel))
    }

    /// Sends `payload` to every session listening on `channel`, at commit (`pg_notify`).
    ///
    /// - Throws: ``PostgresError``.
    public func notify(_ channel: String, payload: String = "") throws(PostgresError) {
        try execute("SELECT pg_notify($1, $2)", [channel, payload])
    }

    /// The notifications received, waiting up to `timeout` seconds for the first one
    /// (`PQconsumeInput`, `PQnotifies`, `poll` on `PQsocket`). Empty when none came in time, or
    /// when `wakeFD` (a pipe's read end, say) became readable first: the caller reads it.
    ///
    /// - Throws: ``PostgresError`` of kind `connectionLost` when the connection broke.
    public func notifications(waitingUpTo timeout: Double, wakeFD: Int32? = nil) throws(PostgresError) -> [Notification] {
        var received = try drainNotifications()
        guard received.isEmpty, timeout > 0 else { return received }
        let socket = pq.PQsocket(handle)
        guard socket >= 0 else { throw connectionError() }
        var pollers = [pollfd(fd: socket, events: Int16(POLLIN), revents: 0)]
        if let wakeFD { pollers.append(pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)) }
        let deadline = Date().addingTimeInterval(timeout)
        while received.isEmpty {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { break }
            let ready: Int
            do { ready = try Syscall.poll(&pollers, timeout: .milliseconds(min(remaining * 1000, Double(Int32.max)).rounded(.up))) } catch {
                throw PostgresError(.client, "poll: " + error.reason)
            }
            if ready == 0 { break }
            received = try drainNotifications()
            if pollers.count > 1, pollers[1].revents != 0 { break }
        }
        return received
    }

    /// Reads what the socket holds and returns the notifications queued so far.
    private func drainNotifications() throws(PostgresError) -> [Notification] {
        guard pq.PQconsumeInput(handle) != 0 else { throw connectionError() }
        var received: [Notification] = []
        while let notice = pq.PQnotifies(handle) {
            received.append(
                Notification(
                    channel: String(cString: notice.pointee.relname), payload: String(cString: notice.pointee.extra),
                    senderPID: notice.pointee.be_pid))
            pq.PQfreemem(notice)
        }
        return received
    }
}
