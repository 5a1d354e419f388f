import Foundation
import Synchronization

/// How much history a database keeps: the same for every process that follows the environment.
///
/// - `NOTESFS_HISTORY_INTERVAL`: seconds of continuous editing per kept version (default 600).
/// - `NOTESFS_HISTORY_BUDGET`: the share of the database's bytes versions may take, in percent
///   (default 20).
public struct HistorySettings: Sendable, Equatable {
    /// At most one version per note per this many seconds of continuous editing.
    public var interval: TimeInterval = 600
    /// Versions may take up to this share of the database's bytes (notes, attachments and versions).
    public var budgetFraction: Double = 0.2
    /// Every version made in this time is kept, whatever the budget.
    public var keepAll: TimeInterval = 7 * 86_400
    /// Then one a day until this age, then one a week. Also how long the version a delete,
    /// restore, merge, conflict or rename replaced is kept, whatever the budget.
    public var keepDaily: TimeInterval = 90 * 86_400
    /// The newest this many versions of each note are kept, whatever their age and the budget.
    public var keepLast = 10
    /// Versions are never pruned for space while they take no more than this many bytes.
    public var floorBytes: Int64 = 64 << 20

    public init(interval: TimeInterval = 600, budgetFraction: Double = 0.2) {
        self.interval = interval
        self.budgetFraction = budgetFraction
    }

    /// What retention keeps, in words (`history prune --dry-run`, the README).
    public var summary: String {
        let days = { (interval: TimeInterval) in Int(interval / 86_400) }
        return """
            kept: every version of the last \(days(keepAll)) days and the last \(keepLast) versions of each note; \
            the version before a delete, restore or merge for \(days(keepDaily)) days; \
            older ones: the newest of each day until \(days(keepDaily)) days, then of each week. \
            For space, only when versions take more than \(Int(budgetFraction * 100))% of the database \
            (NOTESFS_HISTORY_BUDGET) and more than \(floorBytes >> 20) MiB, the oldest of the others go first. \
            To keep more: NOTESFS_HISTORY_BUDGET=100
            """
    }

    /// The defaults, changed by the environment variables above. A value that is not a number in
    /// range is reported through `warn` (by default on stderr, once per process and value) and
    /// the default is kept.
    public static func fromEnvironment(
        _ environment: [String: String] = ProcessInfo.processInfo.environment, warn: (String) -> Void = warnOnce
    ) -> HistorySettings {
        var settings = HistorySettings()
        if let text = environment["NOTESFS_HISTORY_INTERVAL"] {
            if let seconds = Double(text), seconds.isFinite, seconds >= 0 {
                settings.interval = seconds
            } else {
                warn("NOTESFS_HISTORY_INTERVAL='\(text)' is not a number of seconds (0 or more); using \(Int(settings.interval))")
            }
        }
        if let text = environment["NOTESFS_HISTORY_BUDGET"] {
            if let percent = Double(text), percent.isFinite, percent >= 0, percent <= 100 {
                settings.budgetFraction = percent / 100
            } else {
                warn("NOTESFS_HISTORY_BUDGET='\(text)' is not a percentage from 0 to 100; using \(Int(settings.budgetFraction * 100))")
            }
        }
        return settings
    }

    /// The warnings already written by ``warnOnce(_:)``. Guarded by its own mutex: any thread
    /// (a command, a mount's prune thread) may read the settings.
    private static let warned = Mutex<Set<String>>([])

    /// Writes `message` to stderr as `notesfs: message`, unless this process wrote it already (a
    /// mount reads the settings at every prune).
    public static func warnOnce(_ message: String) {
        guard warned.withLock({ $0.insert(message).inserted }) else { return }
        FileHandle.standardError.write(Data("notesfs: \(message)\n".utf8))
    }
}
