import Foundation
import RecordStore

/// Which file a link points at, by Obsidian's rules.
///
/// Paths are vault paths (`Work/Plan B.md`, `img/pic.png`: from the root, `/`-separated, no leading
/// `/`). The target is the link's decoded destination without its heading (`NoteLink.target`).
///
/// 1. Names compare case-insensitively and by Unicode canonical equivalence throughout: both sides
///    are lowercased and put in NFC. `\` is an ordinary character, not a separator.
/// 2. Heading only (`[[#Heading]]`, `[x](#heading)`, an empty target): the note the link is in.
/// 3. A target that starts with `./` or `../` is relative to the folder of the note the link is
///    in: `.` and empty components are dropped, `..` removes the folder before it (`..` above the
///    root: broken). It names the file with that path, or nothing.
/// 4. Any other target (wiki links; markdown links without `./`): a leading `/` is removed, giving
///    `p`. The files that match `p` are those whose path is `p` or ends with `/p` (a suffix that
///    starts at a folder boundary).
/// 5. Extensions (rules 3 and 4): a target ending in `.md` matches only files with exactly that
///    name. Any other target (`Plan B`, `pic.png`, `v1.2`) matches the note `p.md` and the file
///    named exactly `p`; when any note `p.md` matches, only notes count (`[[Plan]]` is `Plan.md`
///    even where a file named `Plan` sits closer). So `[[pic.png]]` is the attachment `pic.png`
///    unless a note titled `pic.png` exists, and a note title with a dot (`v1.2`) needs no `.md`.
/// 6. Several matches: the first of
///    a. the path equal to `p` (or `p.md`) from the root;
///    b. the path `p` (or `p.md`) in the folder of the note the link is in;
///    c. the shortest path, in characters (case-folded, NFC);
///    d. the smallest path in byte order (so the answer never depends on the order of lookup).
/// 7. No match: broken (nil).
public enum LinkResolver {
    /// The lookup key of a file name or a link's last component: lowercased, in Unicode canonical
    /// composition (NFC), a trailing `.md` removed (`Plan B.md`, `plan b`, `PLAN B` → `plan b`;
    /// `pic.png` → `pic.png`).
    public static func key(of name: String) -> String {
        let folded = fold(name)
        return folded.hasSuffix(".md") ? String(folded.dropLast(3)) : folded
    }

    /// The path `link`, written in the note at `sourcePath`, resolves to (one of the paths of
    /// `targets`, as `targets` spells it); `sourcePath` for a link to a heading of the same note;
    /// nil when it resolves to nothing.
    public static func resolve(_ link: NoteLink, from sourcePath: String, in targets: some LinkTargets) -> String? {
        resolve(target: link.target, from: sourcePath, in: targets)
    }

    /// `resolve(_:from:in:)` for a decoded target.
    static func resolve(target: String, from sourcePath: String, in targets: some LinkTargets) -> String? {
        if target.isEmpty { return sourcePath }
        let sourceFolder = folder(of: sourcePath)
        if target.hasPrefix("./") || target.hasPrefix("../") {
            guard let path = normalized(target, in: sourceFolder) else { return nil }
            return best(among: matches(of: path, bySuffix: false, in: targets), for: path, sourceFolder: nil)
        }
        var path = Substring(target)
        while path.first == "/" { path = path.dropFirst() }
        if path.isEmpty { return nil }
        return best(among: matches(of: String(path), bySuffix: true, in: targets), for: String(path), sourceFolder: sourceFolder)
    }

    /// A file that matches a target, with its folded path.
    private struct Match {
        var path: String
        var folded: String
        var isNote: Bool
    }

    /// The files of `targets` whose path is `path` (or `path.md`), or with `bySuffix` also those
    /// whose path ends with `/path` (`/path.md`). Notes only when a note matches (rule 5).
    private static func matches(of path: String, bySuffix: Bool, in targets: some LinkTargets) -> [Match] {
        let foldedPath = fold(path)
        let namesNote = foldedPath.hasSuffix(".md")
        let wanted = namesNote ? [foldedPath] : [foldedPath + ".md", foldedPath]
        var found: [Match] = []
        for candidate in targets.paths(withKey: key(of: lastComponent(of: path))) {
            let folded = fold(candidate)
            for (index, name) in wanted.enumerated()
            where folded.utf8.elementsEqual(name.utf8) || (bySuffix && endsAtBoundary(folded, with: name)) {
                found.append(Match(path: candidate, folded: folded, isNote: namesNote || index == 0))
                break
            }
        }
        if found.contains(where: \.isNote) { found.removeAll { !$0.isNote } }
        return found
    }

    /// The match rule 6 picks.
    private static func best(among matches: [Match], for path: String, sourceFolder: String?) -> String? {
        guard matches.count > 1 else { return matches.first?.path }
        let foldedPath = fold(path)
        func isPath(_ match: Match, _ wanted: String) -> Bool {
            let base = match.folded.hasSuffix(".md") && !wanted.hasSuffix(".md") ? String(match.folded.dropLast(3)) : match.folded
            return base.utf8.elementsEqual(wanted.utf8) || match.folded.utf8.elementsEqual(wanted.utf8)
        }
        func first(_ group: [Match]) -> String? {
            group.min { a, b in
                let (countA, countB) = (a.folded.count, b.folded.count)
                if countA != countB { return countA < countB }
                return a.path.utf8.lexicographicallyPrecedes(b.path.utf8)
            }?.path
        }
        if let fromRoot = first(matches.filter { isPath($0, foldedPath) }) { return fromRoot }
        if let sourceFolder, !sourceFolder.isEmpty {
            let inFolder = fold(sourceFolder) + "/" + foldedPath
            if let local = first(matches.filter { isPath($0, inFolder) }) { return local }
        }
        return first(matches)
    }

    /// `.`, `..` and empty components of `target` resolved against `folder`; nil above the root.
    static func normalized(_ target: String, in folder: String) -> String? {
        var components = folder.isEmpty ? [] : folder.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        for component in target.split(separator: "/", omittingEmptySubsequences: true) {
            switch component {
            case ".": continue
            case "..":
                if components.isEmpty { return nil }
                components.removeLast()
            default: components.append(String(component))
            }
        }
        return components.isEmpty ? nil : components.joined(separator: "/")
    }

    /// `text` lowercased and in NFC: the form every comparison uses.
    static func fold(_ text: String) -> String {
        text.lowercased().canonicallyComposed
    }

    /// Whether `path` ends with `/` + `suffix` (both folded): a suffix at a folder boundary.
    private static func endsAtBoundary(_ path: String, with suffix: String) -> Bool {
        let (pathBytes, suffixBytes) = (path.utf8, suffix.utf8)
        guard pathBytes.count > suffixBytes.count else { return false }
        let start = pathBytes.index(pathBytes.endIndex, offsetBy: -suffixBytes.count)
        return pathBytes[pathBytes.index(before: start)] == UInt8(ascii: "/") && pathBytes[start...].elementsEqual(suffixBytes)
    }

    /// The last `/`-separated component of a path (the whole path when it has no `/`).
    static func lastComponent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        return String(path[path.index(after: slash)...])
    }

    /// The folder of a path: everything before its last `/` (empty at the root).
    static func folder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "" }
        return String(path[..<slash])
    }
}
