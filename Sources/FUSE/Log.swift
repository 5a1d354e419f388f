/// `Log`: messages to stderr in the foreground, to syslog once the process is daemonised.

import CFuse
import Glibc
import Synchronization

/// A tiny logger: stderr by default; `useSyslog` switches to syslog (after `fuse_daemonize`,
/// whose stdio is /dev/null).
public enum Log {
    public enum Level: Int, Sendable, Comparable {
        case debug, info, warning, error

        var syslogPriority: Int32 {
            switch self {
            case .debug: LOG_DEBUG
            case .info: LOG_INFO
            case .warning: LOG_WARNING
            case .error: LOG_ERR
            }
        }

        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    struct State {
        var syslog = false
        var minimum = Level.info
        var identifier = "notesfs"
    }

    static let state = Mutex(State())

    /// Sends later messages to syslog under `identifier` (`openlog`, facility `LOG_DAEMON`).
    public static func useSyslog(identifier: String) {
        state.withLock { state in
            // openlog keeps the pointer: the copy is intentionally never freed.
            openlog(strdup(identifier), LOG_PID, LOG_DAEMON)
            state.syslog = true
            state.identifier = identifier
        }
    }

    /// Messages below `level` are dropped (default `.info`; `-d` would use `.debug`).
    public static func setMinimumLevel(_ level: Level) { state.withLock { $0.minimum = level } }

    public static func debug(_ message: @autoclosure () -> String) { write(.debug, message) }
    public static func info(_ message: @autoclosure () -> String) { write(.info, message) }
    public static func warning(_ message: @autoclosure () -> String) { write(.warning, message) }
    public static func error(_ message: @autoclosure () -> String) { write(.error, message) }

    static func write(_ level: Level, _ message: () -> String) {
        let (toSyslog, minimum, identifier) = state.withLock { ($0.syslog, $0.minimum, $0.identifier) }
        guard level >= minimum else { return }
        let text = message()
        if toSyslog {
            notesfs_syslog(level.syslogPriority, text)
        } else {
            let line = "\(identifier): \(text)\n"
            _ = line.withCString { Glibc.write(STDERR_FILENO, $0, strlen($0)) }
        }
    }
}
