/// The new destination of a link whose target moved (or whose note moved), so that it resolves to
/// the target again by `LinkResolver`'s rules, keeping the link's own form.
///
/// The caller passes the world after the move (`targets`), the note's path after the move, the
/// target's path after the move, and the link's destination as written (the bytes of
/// `targetRange`). Candidate destinations are tried in the order below; the first that resolves to
/// the new path (checked with `LinkResolver`) is returned.
///
/// - `.md`: the new file's name is written with `.md` when the link's target ended in `.md`, and
///   without it otherwise (an attachment keeps its whole name, `pic.png`). A heading-only link
///   (`[[#H]]`) counts as a wiki link without `.md`, a markdown `(#h)` as one with `.md`.
/// - Written relative (`./…`, `../…`), wiki or markdown: the relative path from the note's folder to
///   the new path, starting with `../` or else `./` (a link that was relative stays relative, so
///   `../x.md` whose target moved into the note's folder becomes `./x.md`).
/// - Written from the root (leading `/`): `/` and the full path.
/// - Wiki link written as a name or a path without a leading `/` (`[[Plan B]]`, `[[Work/Plan B]]`):
///   the shortest suffix of the new path with at least as many components as the original target
///   had (a bare name tries the name, then `Folder/Name`, then `A/Folder/Name`, …; `Work/Plan B`
///   tries two components first), up to the full path (which resolves by `LinkResolver`'s rule 6a
///   unless its rule 5 hides the file).
/// - Markdown link written without `./`, `../` or `/` (`[x](Other.md)`, `[x](Sub/Other.md)`): first
///   the path relative to the note's folder when the new path is inside that folder (what other
///   markdown tools read; for a note at the root, the full path), or anywhere (`../Other.md`) when
///   the link read as a relative path before the move (`keepingRelative`), then the suffixes as
///   for wiki links.
/// - When none of the above resolves: any suffix, `/` and the full path, then the relative path.
///   Nil when none resolves: only when a note `p.md` hides a file named `p` on every path
///   (`LinkResolver`'s rule 5), or when no candidate can be written as a wiki link.
/// - Wiki links cannot carry `|`, `#`, `[[`, `]]`, a line break or a trailing `]` in their target:
///   such candidates are skipped, and when none is left the result is nil (the caller leaves the
///   link as it was and reports it as broken).
/// - Markdown encoding follows the original destination: written with percent escapes (`%20`, any
///   `%XX`): the new one escapes space, `%`, `(`, `)`, `<`, `>`, `#`, `?`, `\` and control
///   characters, and non-ASCII characters (as UTF-8 bytes) unless the original had non-ASCII
///   characters raw. Written with raw spaces (inside `<…>`): spaces stay raw. Written with neither:
///   spaces become `%20` (a raw space would end the destination); `(` and `)` are escaped when
///   unbalanced. In every case `%`, `#`, `<`, `>`, `\` and control characters are escaped, so that
///   the destination decodes to exactly the new path. A markdown candidate without `./`, `../` or
///   `/` whose first component has a `:` is skipped (it would read as a URL scheme).
///
/// Returns nil when the link already resolves to the new path (nothing to write).
public enum LinkRewriter {
    /// The new text for `link.targetRange` so that the link, written in the note now at
    /// `sourcePath`, resolves to `newTargetPath` in `targets` (the world after the move); nil when
    /// it already resolves there, or when no destination of its kind can (see the type's rules).
    ///
    /// `keepingRelative`: the link read as a path relative to its note's folder before the move
    /// (``readsAsRelative(_:from:naming:)``), as other markdown tools read it: it is written
    /// relative again (`../Archive/Plan.md`), even where its name alone would still resolve.
    public static func newTarget(
        for link: NoteLink, writtenAs original: Substring, from sourcePath: String, to newTargetPath: String,
        in targets: some LinkTargets, keepingRelative: Bool = false
    ) -> String? {
        if let now = LinkResolver.resolve(link, from: sourcePath, in: targets), now.utf8.elementsEqual(newTargetPath.utf8),
            !keepingRelative || readsAsRelative(link, from: sourcePath, naming: newTargetPath)
        {
            return nil
        }
        let isWiki = link.style == .wiki
        for candidate in candidates(for: link, from: sourcePath, to: newTargetPath, relativeFirst: keepingRelative) {
            if isWiki ? !isWritableInWiki(candidate) : isReadAsURL(candidate) { continue }
            guard let resolved = LinkResolver.resolve(target: candidate, from: sourcePath, in: targets),
                resolved.utf8.elementsEqual(newTargetPath.utf8)
            else { continue }
            return isWiki ? candidate : encoded(candidate, like: original)
        }
        return nil
    }

    /// The decoded destinations to try, in order.
    private static func candidates(for link: NoteLink, from sourcePath: String, to newTargetPath: String, relativeFirst: Bool) -> [String] {
        let written = link.target
        let keepsMD = written.isEmpty ? link.style == .markdown : LinkResolver.fold(written).hasSuffix(".md")
        var components = newTargetPath.split(separator: "/").map(String.init)
        if var name = components.popLast() {
            if !keepsMD && LinkResolver.fold(name).hasSuffix(".md") { name.removeLast(3) }
            components.append(name)
        }
        let full = components.joined(separator: "/")
        func suffixes(from count: Int) -> [String] {
            guard !components.isEmpty else { return [] }
            return (min(max(count, 1), components.count)...components.count).map { components.suffix($0).joined(separator: "/") }
        }
        let sourceFolder = LinkResolver.folder(of: sourcePath).split(separator: "/").map(String.init)
        var common = 0
        while common < sourceFolder.count, common < components.count - 1,
            LinkResolver.fold(sourceFolder[common]).utf8.elementsEqual(LinkResolver.fold(components[common]).utf8)
        {
            common += 1
        }
        let upward = Array(repeating: "..", count: sourceFolder.count - common)
        let relative = (upward + components[common...]).joined(separator: "/")
        let dotRelative = upward.isEmpty ? "./" + relative : relative

        var ordered: [String] = []
        if written.hasPrefix("./") || written.hasPrefix("../") {
            ordered = [dotRelative]
        } else if written.hasPrefix("/") {
            ordered = ["/" + full]
        } else {
            let writtenCount = written.split(separator: "/").count
            if link.style == .markdown && (upward.isEmpty || relativeFirst) { ordered.append(relative) }
            ordered += suffixes(from: writtenCount)
        }
        ordered += suffixes(from: 1) + ["/" + full, dotRelative]
        var seen = Set<String>()
        return ordered.filter { seen.insert($0).inserted }
    }

    /// Whether a markdown `link` in the note at `sourcePath` reads, as other markdown tools read
    /// it, as a path relative to the note's folder that names `targetPath` (`[x](Plan.md)` beside
    /// `Plan.md`, `[x](../Work/Plan.md)`; compared as ``LinkResolver`` compares names).
    public static func readsAsRelative(_ link: NoteLink, from sourcePath: String, naming targetPath: String) -> Bool {
        guard link.style == .markdown, !link.target.isEmpty, !link.target.hasPrefix("/"),
            let path = LinkResolver.normalized(link.target, in: LinkResolver.folder(of: sourcePath))
        else { return false }
        let (folded, target) = (LinkResolver.fold(path), LinkResolver.fold(targetPath))
        return folded == target || folded + ".md" == target
    }

    /// Whether a wiki link can carry `target` (rules above).
    private static func isWritableInWiki(_ target: String) -> Bool {
        !target.contains("|") && !target.contains("#") && !target.contains("[[") && !target.contains("]]")
            && !target.contains("\n") && !target.contains("\r") && !target.hasSuffix("]")
    }

    /// Whether a markdown destination would read as a URL: no `./`, `../` or `/` start, and a `:`
    /// before the first `/`.
    private static func isReadAsURL(_ target: String) -> Bool {
        if target.hasPrefix("./") || target.hasPrefix("../") || target.hasPrefix("/") { return false }
        return target.prefix { $0 != "/" }.contains(":")
    }

    /// `path` written as a markdown destination in the manner of `original` (rules above).
    static func encoded(_ path: String, like original: Substring) -> String {
        let bytes = Array(original.utf8)
        let hasEscapes = bytes.indices.contains { index in
            bytes[index] == UInt8(ascii: "%") && index + 2 < bytes.count && isHex(bytes[index + 1]) && isHex(bytes[index + 2])
        }
        let hasRawNonASCII = bytes.contains { $0 >= 0x80 }
        let hasRawSpaces = bytes.contains(UInt8(ascii: " "))
        let parenthesesBalanced = areBalanced(path)
        var result = ""
        for scalar in path.unicodeScalars {
            let escape: Bool
            switch scalar {
            case "%", "#", "<", ">", "\\": escape = true
            case _ where scalar.value < 0x20 || scalar.value == 0x7F: escape = true
            case " ": escape = hasEscapes || !hasRawSpaces
            case "(", ")": escape = hasEscapes || (!hasRawSpaces && !parenthesesBalanced)
            case "?": escape = hasEscapes
            case _ where !scalar.isASCII: escape = hasEscapes && !hasRawNonASCII
            default: escape = false
            }
            if escape {
                for byte in String(scalar).utf8 { result += "%" + hexDigits(byte) }
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    private static func isHex(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte | 0x20)
    }

    private static func hexDigits(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
    }

    /// Whether every `)` closes an earlier `(` and every `(` is closed.
    private static func areBalanced(_ text: String) -> Bool {
        var depth = 0
        for character in text {
            if character == "(" { depth += 1 }
            if character == ")" {
                depth -= 1
                if depth < 0 { return false }
            }
        }
        return depth == 0
    }
}
