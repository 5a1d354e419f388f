import Foundation

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
    /// Every version younger than this is kept (unless over the budget).
    public var keepAll: TimeInterval = 7 * 86_400
    /// Then one a day until this age, then one a week.
    public var keepDaily: TimeInterval = 90 * 86_400

    public init(interval: TimeInterval = 600, budgetFraction: Double = 0.2) {
        self.interval = interval
        self.budgetFraction = budgetFraction
    }

    /// The defaults, changed by the environment variables above; a value that is not a number in
    /// range is ignored (with the default kept).
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> HistorySettings {
        var settings = HistorySettings()
        if let text = environment["NOTESFS_HISTORY_INTERVAL"], let seconds = Double(text), seconds.isFinite, seconds >= 0 {
            settings.interval = seconds
        }
        if let text = environment["NOTESFS_HISTORY_BUDGET"], let percent = Double(text), percent.isFinite, percent >= 0, percent <= 100 {
            settings.budgetFraction = percent / 100
        }
        return settings
    }
}
