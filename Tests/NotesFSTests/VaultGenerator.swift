/// A deterministic vault of a few hundred notes, as people keep them in Obsidian: folders three
/// levels deep, titles that repeat in different folders (so a bare `[[Name]]` is ambiguous and the
/// tie rules decide), titles with spaces, accents, `&` and parentheses, attachments, links of every
/// form, broken links, links in code spans and fenced code, URLs, and `#tags`.

import Foundation
import TestSupport

/// One file of a generated vault: its path from the vault's root and its bytes.
struct VaultFile {
    var path: String
    var bytes: [UInt8]
}

enum VaultGenerator {
    /// Every folder, parents before children.
    static let folders = [
        "Work", "Work/Projects", "Work/Projects/Alpha & Beta", "Work/Meetings", "Home", "Home/Garden", "Home/Garden/Beds (raised)",
        "Café (Paris)", "Café (Paris)/Menus", "Archive", "Archive/2023", "Archive/2023/Q&A", "img", "Inbox",
    ]

    /// Notes that are always there (the tests move these): titles that repeat across folders.
    static let anchors = [
        "Index.md", "Other.md", "Work/Other.md", "Work/Plan B.md", "Home/Plan B.md", "Work/Projects/Plan B.md",
        "Archive/2023/Plan B.md", "Work/Q&A.md", "Café (Paris)/Q&A.md", "Home/Garden/Résumé.md", "Work/Résumé.md",
        "Work/Meeting (notes).md", "Work/Meetings/Meeting (notes).md", "Work/Projects/Alpha & Beta/Spec (v1).md",
    ]

    /// Attachments (PNG bytes): `pic 1.png` twice, so `![[pic 1.png]]` ties too.
    static let attachments = ["img/pic 1.png", "Home/Garden/pic 1.png", "img/diagram (v2).png"]

    /// Titles the other notes draw from, so that they repeat in different folders.
    static let sharedTitles = ["Ideas", "Todo", "Daily (log)", "Crème brûlée", "R&D"]

    static let tagPool = ["project/alpha", "project/beta", "Café", "todo", "idée", "q&a"]

    /// A vault of the anchors, the attachments and `count` more notes, the same for a seed.
    static func make(seed: UInt64, notes count: Int) -> [VaultFile] {
        var random = SeededGenerator(state: seed)
        var notePaths = anchors
        var taken = Set(anchors.map { $0.lowercased() })
        let noteFolders = [""] + folders.filter { $0 != "img" && $0 != "Inbox" }
        for number in 0..<count {
            let folder = noteFolders.randomElement(using: &random)!
            var title: String
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<3: title = sharedTitles.randomElement(using: &random)!
            case 3: title = "Étude \(number)"
            case 4: title = "Note \(number) (draft)"
            case 5: title = "Q&A \(number)"
            default: title = "Note \(number)"
            }
            var path = joined(folder, title + ".md")
            if taken.contains(path.lowercased()) { path = joined(folder, "Note \(number).md") }
            taken.insert(path.lowercased())
            notePaths.append(path)
        }
        var files = attachments.map { VaultFile(path: $0, bytes: png(for: $0)) }
        let targets = notePaths + attachments
        for path in notePaths {
            files.append(VaultFile(path: path, bytes: Array(text(of: path, linkingTo: targets, &random).utf8)))
        }
        return files
    }

    /// A note's text: a heading, a few lines of links, sometimes code, URLs and broken links, tags.
    static func text(of path: String, linkingTo targets: [String], _ random: inout SeededGenerator) -> String {
        var lines = ["# \(title(of: path))", "", "Intro to this note #\(tagPool.randomElement(using: &random)!).", "", "## Heading A", ""]
        for _ in 0..<Int.random(in: 2...5, using: &random) {
            let links = (0..<Int.random(in: 1...3, using: &random)).map { _ in
                link(from: path, to: targets.randomElement(using: &random)!, &random)
            }
            lines.append("- see " + links.joined(separator: ", ") + " here")
        }
        if Bool.random(using: &random) {
            let other = title(of: targets.randomElement(using: &random)!)
            lines.append("Inline `[[\(other)]]` and `[x](\(encoded(other)).md)` and ``[[\(other)|a `tick`]]`` are code #\(tag(&random)).")
        }
        if Int.random(in: 0..<3, using: &random) == 0 {
            let other = targets.randomElement(using: &random)!
            lines += ["", "```markdown", "[[\(title(of: other))]] and [y](<\(other)>) #notatag", "```", ""]
        }
        if Int.random(in: 0..<4, using: &random) == 0 {
            lines += ["~~~", "![[pic 1.png]] [z](../Work/Plan%20B.md)", "~~~"]
        }
        if Int.random(in: 0..<3, using: &random) == 0 {
            lines.append("Read [the spec](https://x/y.md), https://x/y.md and <https://x/y.md#frag> (not links).")
        }
        if Int.random(in: 0..<3, using: &random) == 0 {
            let number = Int.random(in: 0..<50, using: &random)
            lines.append(
                "Broken: [[Missing Note \(number)]], [gone](../Nowhere/Gone%20\(number).md), [[Work/Ghost \(number)]], ![](img/none%20\(number).png)"
            )
        }
        lines += ["", "## Heading B", "", "Tagged #\(tag(&random)) and #\(tag(&random)), not #2024 or a#b.", ""]
        return lines.joined(separator: "\n")
    }

    static func tag(_ random: inout SeededGenerator) -> String { tagPool.randomElement(using: &random)! }

    /// A link from the note at `source` to `target` in one of the forms people write.
    static func link(from source: String, to target: String, _ random: inout SeededGenerator) -> String {
        let name = String(target.split(separator: "/").last!)
        let relative = relativePath(from: source, to: target)
        if !target.hasSuffix(".md") {
            switch Int.random(in: 0..<3, using: &random) {
            case 0: return "![[\(name)]]"
            case 1: return "![](\(encoded(relative)))"
            default: return "![alt](<\(target)>)"
            }
        }
        let title = title(of: target)
        let folder = folder(of: target)
        let withoutMD = String(target.dropLast(3))
        switch Int.random(in: 0..<12, using: &random) {
        case 0: return "[[\(title)]]"
        case 1: return "[[\(title)|shown text]]"
        case 2: return "[[\(title)#Heading A]]"
        case 3: return folder.isEmpty ? "[[\(title)]]" : "[[\(folder.split(separator: "/").last!)/\(title)]]"
        case 4: return "[[\(withoutMD)]]"
        case 5: return "![[\(title)]]"
        case 6: return "[x](\(encoded(title, accents: Bool.random(using: &random))).md)"
        case 7: return "[x](\(encoded(relative, accents: Bool.random(using: &random))))"
        case 8: return "[x](<\(target)>)"
        case 9: return "[x](\(encoded(relative))#Heading%20B)"
        case 10: return "[x](/\(encoded(target)))"
        default: return "[[\(title).md]]"
        }
    }

    /// `target` relative to the folder of `source`: `./` or `../` first.
    static func relativePath(from source: String, to target: String) -> String {
        let from = folder(of: source).split(separator: "/")
        let to = target.split(separator: "/")
        var common = 0
        while common < from.count, common < to.count - 1, from[common] == to[common] { common += 1 }
        let up = Array(repeating: "..", count: from.count - common)
        let rest = to[common...].map(String.init)
        return (up.isEmpty ? ["."] + rest : up + rest).joined(separator: "/")
    }

    /// A markdown destination: spaces as `%20`, with `accents` non-ASCII bytes as `%XX` too.
    static func encoded(_ path: String, accents: Bool = true) -> String {
        var result = ""
        for scalar in path.unicodeScalars {
            if scalar == " " {
                result += "%20"
            } else if scalar.value >= 0x80 && accents {
                result += String(scalar).utf8.map { String(format: "%%%02X", $0) }.joined()
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    static func title(of path: String) -> String {
        let name = String(path.split(separator: "/").last!)
        return name.hasSuffix(".md") ? String(name.dropLast(3)) : name
    }

    static func folder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "" }
        return String(path[..<slash])
    }

    static func joined(_ folder: String, _ name: String) -> String { folder.isEmpty ? name : folder + "/" + name }

    /// A few bytes that start like a PNG and differ by path (not valid UTF-8: stored as bytes).
    static func png(for path: String) -> [UInt8] {
        [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0xFF, 0xFE] + Array(path.utf8)
    }
}
