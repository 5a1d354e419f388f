/// An independent reading of a vault's links, to check the product's: a small line-by-line scanner
/// (regular expressions) and a resolver written from the documented rules, sharing no code with
/// `NoteText` or `LinkResolver`. It handles what ``VaultGenerator`` writes (links on one line,
/// simple fences, code spans on one line), not every corner of CommonMark.
///
/// Resolution rules: names compare case-insensitively (lowercased, NFC); an empty target is the
/// note itself; `./` and `../` targets are relative to the note's folder and name one path; other
/// targets (a leading `/` dropped) match every file whose path is the target or ends with
/// `/target` at a folder boundary; a target without `.md` matches the note `target.md` and the file
/// named `target`, notes first; ties go to the path from the root, then the path in the note's
/// folder, then the shortest path, then the smallest in byte order.

import Foundation

/// One link found in a note.
struct CheckedLink: Hashable {
    /// The line (from 1).
    var line: Int
    /// The link as written (`[[Plan B|x]]`, `[x](../Work/Plan%20B.md)`).
    var written: String
    /// The target as the resolver reads it (decoded, without heading).
    var target: String
}

/// What the checker reads in one note.
struct CheckedText {
    var links: [CheckedLink] = []
    /// The text with every link's target bytes removed: a rename may change nothing else.
    var skeleton = ""
    /// The lines of code spans and fenced code, in order.
    var code: [String] = []
    /// The `#tag`s, lowercased.
    var tags = Set<String>()
}

enum VaultLinkChecker {
    private static let wiki = regex(#"!?\[\[([^\[\]\n]+)\]\]"#)
    private static let markdown = regex(
        #"!?\[([^\[\]]*)\]\((?:<([^<>\n]*)>|([^\s<>()]*(?:\([^\s<>()]*\)[^\s<>()]*)*))(?:[ \t]+"[^"]*")?\)"#)
    private static let scheme = regex(#"^[A-Za-z][A-Za-z0-9+.-]*:"#)
    private static let tag = regex(#"(?:^|(?<=[\s(\[{,;"'*~>|]))#([\p{L}\p{M}\p{Nd}_/-]+)"#)

    private static func regex(_ pattern: String) -> NSRegularExpression {
        do { return try NSRegularExpression(pattern: pattern) } catch { fatalError("bad pattern \(pattern): \(error)") }
    }

    /// The links, code, tags and skeleton of a note's text.
    static func scan(_ text: String) -> CheckedText {
        var result = CheckedText()
        var skeletonLines: [String] = []
        var fence: (mark: Character, count: Int)?
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).enumerated() {
            let trimmed = line.drop { $0 == " " }
            let indent = line.count - trimmed.count
            let run = trimmed.prefix { $0 == "`" || $0 == "~" }
            let mark = run.first
            let runCount = mark.map { m in run.prefix { $0 == m }.count } ?? 0
            if let open = fence {
                result.code.append(line)
                skeletonLines.append(line)
                if indent <= 3, mark == open.mark, runCount >= open.count,
                    trimmed.dropFirst(runCount).allSatisfy({ $0 == " " || $0 == "\t" })
                {
                    fence = nil
                }
                continue
            }
            if indent <= 3, let mark, runCount >= 3, mark == "~" || !trimmed.dropFirst(runCount).contains("`") {
                fence = (mark, runCount)
                result.code.append(line)
                skeletonLines.append(line)
                continue
            }
            skeletonLines.append(scanLine(line, number: index + 1, into: &result))
        }
        result.skeleton = skeletonLines.joined(separator: "\n")
        return result
    }

    /// Reads one line outside fences; returns it without its links' target bytes.
    private static func scanLine(_ line: String, number: Int, into result: inout CheckedText) -> String {
        var units = Array(line.utf16)
        let original = units
        // Code spans: a run of N backticks to the next run of exactly N.
        var position = 0
        while position < units.count {
            guard units[position] == 0x60 else {
                position += 1
                continue
            }
            let end = backtickRunEnd(units, from: position)
            var search = end
            var close: Int?
            while search < units.count {
                guard units[search] == 0x60 else {
                    search += 1
                    continue
                }
                let runEnd = backtickRunEnd(units, from: search)
                if runEnd - search == end - position {
                    close = runEnd
                    break
                }
                search = runEnd
            }
            guard let close else {
                position = end
                continue
            }
            result.code.append(String(decoding: original[position..<close], as: UTF16.self))
            for i in position..<close { units[i] = 0x20 }
            position = close
        }
        var removed: [Range<Int>] = []
        var found: [(start: Int, link: CheckedLink)] = []
        func string(_ range: NSRange, in source: [UInt16]) -> String {
            String(decoding: source[range.location..<(range.location + range.length)], as: UTF16.self)
        }
        // Wiki links.
        for match in wiki.matches(in: String(decoding: units, as: UTF16.self), range: NSRange(location: 0, length: units.count)) {
            let inner = match.range(at: 1)
            let innerUnits = Array(original[inner.location..<(inner.location + inner.length)])
            let cut = innerUnits.firstIndex { $0 == 0x23 || $0 == 0x7C } ?? innerUnits.count
            var start = 0
            var end = cut
            while start < end, innerUnits[start] == 0x20 || innerUnits[start] == 0x09 { start += 1 }
            while end > start, innerUnits[end - 1] == 0x20 || innerUnits[end - 1] == 0x09 { end -= 1 }
            let target = String(decoding: innerUnits[start..<end], as: UTF16.self)
            removed.append((inner.location + start)..<(inner.location + end))
            found.append((match.range.location, CheckedLink(line: number, written: string(match.range, in: original), target: target)))
            for i in match.range.location..<(match.range.location + match.range.length) { units[i] = 0x20 }
        }
        // Markdown links and images.
        for match in markdown.matches(in: String(decoding: units, as: UTF16.self), range: NSRange(location: 0, length: units.count)) {
            let destination = match.range(at: 2).location != NSNotFound ? match.range(at: 2) : match.range(at: 3)
            let raw = string(destination, in: original)
            let hash = raw.utf16.firstIndex(of: 0x23).map { raw.utf16.distance(from: raw.utf16.startIndex, to: $0) } ?? raw.utf16.count
            for i in destination.location..<(destination.location + destination.length) { units[i] = 0x20 }
            if raw.isEmpty || raw == "#" || scheme.firstMatch(in: raw, range: NSRange(location: 0, length: raw.utf16.count)) != nil {
                continue
            }
            let target = percentDecoded(String(decoding: Array(raw.utf16)[..<hash], as: UTF16.self))
            removed.append(destination.location..<(destination.location + hash))
            found.append((match.range.location, CheckedLink(line: number, written: string(match.range, in: original), target: target)))
        }
        result.links += found.sorted { $0.start < $1.start }.map(\.link)
        // Tags, outside code, wiki links and destinations.
        for match in tag.matches(in: String(decoding: units, as: UTF16.self), range: NSRange(location: 0, length: units.count)) {
            var name = string(match.range(at: 1), in: units)
            while name.hasSuffix("/") { name.removeLast() }
            if !name.isEmpty, name.contains(where: { !$0.isNumber }), name.utf8.count <= 512 { result.tags.insert(name.lowercased()) }
        }
        var skeleton = original
        for range in removed.sorted(by: { $0.lowerBound > $1.lowerBound }) { skeleton.removeSubrange(range) }
        return String(decoding: skeleton, as: UTF16.self)
    }

    /// The end of the run of backticks that starts at `start`.
    private static func backtickRunEnd(_ units: [UInt16], from start: Int) -> Int {
        var end = start
        while end < units.count, units[end] == 0x60 { end += 1 }
        return end
    }

    /// `%XX` escapes decoded; the text as written when they do not decode to UTF-8.
    static func percentDecoded(_ text: String) -> String {
        var bytes: [UInt8] = []
        let source = Array(text.utf8)
        var index = 0
        while index < source.count {
            if source[index] == UInt8(ascii: "%"), index + 2 < source.count,
                let value = UInt8(String(decoding: source[(index + 1)...(index + 2)], as: UTF8.self), radix: 16)
            {
                bytes.append(value)
                index += 3
            } else {
                bytes.append(source[index])
                index += 1
            }
        }
        return String(validating: bytes, as: UTF8.self) ?? text
    }

    static func fold(_ text: String) -> String { text.lowercased().precomposedStringWithCanonicalMapping }

    /// The path of `files` that `target`, written in the note at `source`, resolves to; nil: broken.
    static func resolve(_ target: String, from source: String, in files: [String]) -> String? {
        if target.isEmpty { return source }
        let folder = VaultGenerator.folder(of: source)
        if target.hasPrefix("./") || target.hasPrefix("../") {
            var parts = folder.isEmpty ? [] : folder.split(separator: "/").map(String.init)
            for part in target.split(separator: "/") {
                if part == "." { continue }
                if part == ".." {
                    if parts.isEmpty { return nil }
                    parts.removeLast()
                } else {
                    parts.append(String(part))
                }
            }
            if parts.isEmpty { return nil }
            let path = parts.joined(separator: "/")
            return pick(matches(path, bySuffix: false, in: files), path: path, folder: nil)
        }
        var path = Substring(target)
        while path.hasPrefix("/") { path = path.dropFirst() }
        if path.isEmpty { return nil }
        return pick(matches(String(path), bySuffix: true, in: files), path: String(path), folder: folder)
    }

    private static func matches(_ path: String, bySuffix: Bool, in files: [String]) -> [String] {
        let wanted = fold(path)
        let names = wanted.hasSuffix(".md") ? [wanted] : [wanted + ".md", wanted]
        var notes: [String] = []
        var others: [String] = []
        for file in files {
            let folded = fold(file)
            for (index, name) in names.enumerated() where folded == name || (bySuffix && folded.hasSuffix("/" + name)) {
                if wanted.hasSuffix(".md") || index == 0 { notes.append(file) } else { others.append(file) }
                break
            }
        }
        return notes.isEmpty ? others : notes
    }

    private static func pick(_ matches: [String], path: String, folder: String?) -> String? {
        guard matches.count > 1 else { return matches.first }
        func best(_ group: [String]) -> String? {
            group.min { a, b in
                let (x, y) = (fold(a).count, fold(b).count)
                return x != y ? x < y : Array(a.utf8).lexicographicallyPrecedes(Array(b.utf8))
            }
        }
        func isExactly(_ file: String, _ wanted: String) -> Bool {
            let folded = fold(file)
            return folded == wanted || folded == wanted + ".md"
        }
        let wanted = fold(path)
        if let root = best(matches.filter { isExactly($0, wanted) }) { return root }
        if let folder, !folder.isEmpty, let local = best(matches.filter { isExactly($0, fold(folder) + "/" + wanted) }) { return local }
        return best(matches)
    }
}
