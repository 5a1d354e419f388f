import Foundation

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// A one-line progress bar on stderr: `label [#####.....] count/total  rate/s  ETA m:ss`.
///
/// Draws only when enabled (stderr is a terminal and not `-q`), at most ten times a second.
final class ProgressBar {
    private let label: String
    private let total: Int
    private let enabled: Bool
    private let start: Double
    private(set) var count = 0
    private var lastDraw = 0.0
    /// Shown after the bar (what else moved: bytes).
    private var detail = ""

    init(label: String, total: Int, enabled: Bool) {
        self.label = label
        self.total = total
        self.enabled = enabled
        start = Self.now()
    }

    /// Seconds since the bar started.
    var elapsed: Double { Self.now() - start }

    func advance(by n: Int = 1, detail: String? = nil) {
        count += n
        if let detail { self.detail = detail }
        guard enabled else { return }
        let now = Self.now()
        if now - lastDraw >= 0.1 || count >= total {
            lastDraw = now
            draw(now: now)
        }
    }

    /// Draws the final state and ends the line.
    func finish() {
        guard enabled else { return }
        draw(now: Self.now())
        FileHandle.standardError.write(Data("\n".utf8))
    }

    /// The text of the bar (without the leading carriage return).
    static func render(label: String, count: Int, total: Int, elapsed: Double, width: Int = 30) -> String {
        let fraction = total > 0 ? min(1, Double(count) / Double(total)) : 1
        let filled = Int((fraction * Double(width)).rounded(.down))
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        let rate = elapsed > 0 ? Double(count) / elapsed : 0
        var text = "\(label) [\(bar)] \(count)/\(total)  \(Int(rate.rounded()))/s"
        if rate > 0, count < total {
            text += "  ETA " + duration(Double(total - count) / rate)
        } else {
            text += "  " + duration(elapsed)
        }
        return text
    }

    static func duration(_ seconds: Double) -> String {
        let s = Int(seconds.rounded())
        return s >= 3600 ? String(format: "%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60) : String(format: "%d:%02d", s / 60, s % 60)
    }

    private func draw(now: Double) {
        let text = Self.render(label: label, count: count, total: total, elapsed: now - start) + (detail.isEmpty ? "" : "  " + detail)
        FileHandle.standardError.write(Data(("\r" + text + "\u{1B}[K").utf8))
    }

    private static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
