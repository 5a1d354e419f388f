import Foundation

@testable import Notes

extension NoteLink {
    /// A wiki link `[[target#heading]]` as the scanner would report it (ranges are placeholders).
    static func wiki(_ target: String, heading: String? = nil, embed: Bool = false) -> NoteLink {
        NoteLink(
            style: .wiki, isEmbed: embed, range: 0..<0, targetRange: 0..<target.utf8.count, target: target, heading: heading,
            shownText: nil, line: 1)
    }

    /// A markdown link `[x](destination)` as the scanner would report it: `destination` is the raw,
    /// percent-encoded text (no heading), decoded into `target`.
    static func markdown(_ destination: String, heading: String? = nil, embed: Bool = false) -> NoteLink {
        NoteLink(
            style: .markdown, isEmbed: embed, range: 0..<0, targetRange: 0..<destination.utf8.count,
            target: destination.removingPercentEncoding ?? destination, heading: heading, shownText: "x", line: 1)
    }
}
