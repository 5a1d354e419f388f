/// A vault as ``VaultLinkChecker`` reads it through the mount: every file (`find`), every note's
/// links, each resolved to the record it names (`user.notesfs.recordName`), so that a snapshot
/// taken before renames compares with one taken after by record, whatever the paths became.

import Foundation
import TestSupport
import Testing

/// A link that resolves to nothing, as `notesfs links --broken --json` names it.
struct BrokenLinkEntry: Hashable, Comparable, CustomStringConvertible {
    var path: String
    var line: Int
    var target: String

    static func < (a: Self, b: Self) -> Bool { (a.path, a.line, a.target) < (b.path, b.line, b.target) }
    var description: String { "\(path):\(line): \(target)" }
}

/// A link into a file, as `notesfs backlinks PATH --json` names it.
struct BacklinkEntry: Hashable, Comparable, CustomStringConvertible {
    var path: String
    var line: Int
    var target: String
    var text: String

    static func < (a: Self, b: Self) -> Bool { (a.path, a.line, a.target, a.text) < (b.path, b.line, b.target, b.text) }
    var description: String { "\(path):\(line): \(target) | \(text)" }
}

struct VaultSnapshot {
    /// Every regular file, by its path from the root.
    var files: [String] = []
    /// A note's record name → its path, text and what the checker read in it.
    var notes: [String: (path: String, text: String, checked: CheckedText)] = [:]
    /// A note's record name → the record each of its links resolves to (nil: broken), in order.
    var targets: [String: [String?]] = [:]
    /// A note's record name → the path each of its links resolves to (nil: broken), in order.
    var targetPaths: [String: [String?]] = [:]
    /// A file's path → its record name.
    var records: [String: String] = [:]

    /// Reads the vault under `root` through the mount.
    init(root: String) throws {
        let found = try run(["/usr/bin/find", ".", "-type", "f", "-print0"], in: root)
        try #require(found.status == 0, "find: \(found)")
        files = found.stdout.split(separator: 0).map { String(decoding: $0.dropFirst(2), as: UTF8.self) }.sorted()
        var recordCache: [String: String] = [:]
        func record(_ path: String) -> String? {
            if let known = recordCache[path] { return known }
            let name = recordName(root + "/" + path)
            recordCache[path] = name
            return name
        }
        for path in files where path.hasSuffix(".md") {
            let text = try #require(readFile(root + "/" + path), "read \(path)")
            let name = try #require(record(path), "record name of \(path)")
            let checked = VaultLinkChecker.scan(text)
            notes[name] = (path, text, checked)
            let resolved = checked.links.map { VaultLinkChecker.resolve($0.target, from: path, in: files) }
            targetPaths[name] = resolved
            targets[name] = try resolved.map { target in try target.map { try #require(record($0), "record name of \($0)") } }
        }
        records = recordCache
    }

    var linkCount: Int { targets.values.reduce(0) { $0 + $1.count } }

    /// Every link the checker finds broken.
    var broken: [BrokenLinkEntry] {
        notes.flatMap { name, note in
            zip(note.checked.links, targetPaths[name]!).compactMap { link, target in
                target == nil ? BrokenLinkEntry(path: note.path, line: link.line, target: link.target) : nil
            }
        }.sorted()
    }

    /// Every link the checker resolves to `path`.
    func backlinks(of path: String) -> [BacklinkEntry] {
        notes.flatMap { name, note in
            let lines = note.text.split(separator: "\n", omittingEmptySubsequences: false)
            return zip(note.checked.links, targetPaths[name]!).compactMap { link, target in
                target == path
                    ? BacklinkEntry(path: note.path, line: link.line, target: link.target, text: String(lines[link.line - 1])) : nil
            }
        }.sorted()
    }

    /// Each tag (lowercased) with the number of notes that have it.
    var tagCounts: [String: Int] {
        var counts: [String: Int] = [:]
        for note in notes.values { for tag in note.checked.tags { counts[tag, default: 0] += 1 } }
        return counts
    }

    /// The path of the file that has record `name` now.
    func path(ofRecord name: String) -> String? { records.first { $0.value == name }?.key }
}
