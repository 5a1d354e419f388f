import Foundation
import Index
import RecordStore

/// A link into a note: the note it is written in, and where.
public struct Backlink: Sendable, Hashable {
    public var sourcePath: String
    public var sourceName: String
    public var line: Int
    /// The line of the source note that holds the link (without its line end).
    public var lineText: String
    /// The link's destination as written (decoded).
    public var target: String
}

/// A link of a note and what it resolves to.
public struct OutgoingLink: Sendable, Hashable {
    public var link: NoteLink
    /// The path it resolves to; nil: broken.
    public var resolved: String?
}

/// A link that resolves to nothing.
public struct BrokenLink: Sendable, Hashable {
    public var sourcePath: String
    public var line: Int
    public var target: String
}

/// Links, backlinks and tags as the index answers them. Every answer is of one state of the index,
/// caught up first (``catchUp(progress:)``), or, for a process that does not open the store, of
/// an index that is current (``readIfCurrent(databasePath:_:)``).
extension NotesSearchIndex {
    /// Runs `body` on the index caught up with every commit, inside one read of it.
    /// - Throws: ``SQLiteError`` when the index cannot be caught up or read.
    public func readCurrent<T>(_ body: (TextIndex) throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        try catchUp()
        let result = try withReader { (index) throws(SQLiteError) -> T in
            try index.read { () throws(SQLiteError) -> T in try body(index) }
        }
        guard let result else { throw .cannotOpen("the index could not be opened") }
        return result
    }

    /// Runs `body` on the index of the database at `databasePath` without opening the store, when
    /// that index holds every commit (``isCurrent(_:databasePath:)``); nil when it cannot.
    public static func readIfCurrent<T>(databasePath: String, _ body: (TextIndex) throws(SQLiteError) -> T) -> T? {
        guard let index = try? TextIndex(databasePath: databasePath, create: false) else { return nil }
        defer { index.close() }
        return try? index.read { () throws(SQLiteError) -> T? in
            guard try isCurrent(index, databasePath: databasePath) else { return nil }
            return try body(index)
        } ?? nil
    }

    /// The links into the file at `path`, in path and line order.
    /// - Throws: ``SQLiteError``.
    public static func backlinks(of path: String, in index: TextIndex) throws(SQLiteError) -> [Backlink] {
        let key = LinkResolver.key(of: FileMove.lastComponent(path))
        let targets = IndexLinkTargets(index: index)
        var found: [Backlink] = []
        for document in try index.linkingDocuments(keys: [key]) {
            var lines: [Substring]?
            for link in document.links where LinkResolver.resolve(noteLink(link), from: document.path, in: targets) == path {
                if lines == nil {
                    lines = (try index.body(ofDocument: document.name) ?? "").split(separator: "\n", omittingEmptySubsequences: false)
                }
                let text = lines.flatMap { $0.indices.contains(link.line - 1) ? String($0[link.line - 1]) : nil } ?? ""
                found.append(
                    Backlink(
                        sourcePath: document.path, sourceName: document.name, line: link.line,
                        lineText: text.hasSuffix("\r") ? String(text.dropLast()) : text, target: link.target))
            }
        }
        if let failure = targets.failure { throw failure }
        return found
    }

    /// The links of the note at `path` (nil when no note is there), in text order, each resolved.
    /// - Throws: ``SQLiteError``.
    public static func links(ofNoteAt path: String, in index: TextIndex) throws(SQLiteError) -> [OutgoingLink]? {
        guard let document = try index.document(atPath: path), document.recordType == Note.recordType else { return nil }
        let targets = IndexLinkTargets(index: index)
        let text = try index.body(ofDocument: document.name) ?? ""
        let links = NoteText.scan(text).links.map { OutgoingLink(link: $0, resolved: LinkResolver.resolve($0, from: path, in: targets)) }
        if let failure = targets.failure { throw failure }
        return links
    }

    /// Every link that resolves to nothing, in path and line order.
    /// - Throws: ``SQLiteError``.
    public static func brokenLinks(in index: TextIndex) throws(SQLiteError) -> [BrokenLink] {
        let targets = IndexLinkTargets(index: index)
        var broken: [BrokenLink] = []
        for document in try index.linkingDocuments(keys: nil) {
            for link in document.links where LinkResolver.resolve(noteLink(link), from: document.path, in: targets) == nil {
                broken.append(BrokenLink(sourcePath: document.path, line: link.line, target: link.target))
            }
        }
        if let failure = targets.failure { throw failure }
        return broken
    }

    /// A link as the resolver takes it, from what the index keeps (no ranges: it is not rewritten).
    static func noteLink(_ link: IndexedLink) -> NoteLink {
        NoteLink(
            style: link.style == 0 ? .wiki : .markdown, isEmbed: false, range: 0..<0, targetRange: 0..<0, target: link.target, heading: nil,
            shownText: nil, line: link.line)
    }
}

/// The same answers on an index caught up with every commit (the mount's virtual trees).
extension NotesSearchIndex {
    /// The links into the file at `path` (see ``backlinks(of:in:)``).
    /// - Throws: ``SQLiteError``.
    public func backlinks(of path: String) throws(SQLiteError) -> [Backlink] {
        try readCurrent { (index) throws(SQLiteError) in try Self.backlinks(of: path, in: index) }
    }

    /// What `.tags/TAG` lists: the tags one level under `tag` (the top-level tags for nil), each
    /// in its most common spelling (``TextIndex/tagCounts(under:)``) with the record names of the
    /// notes that have it or a tag under it, and the notes that have `tag` itself (none for nil).
    /// - Throws: ``SQLiteError``.
    public func tags(listing tag: String?) throws(SQLiteError) -> (
        children: [(name: String, notes: [String])], tagged: [(name: String, path: String)]
    ) {
        try readCurrent { (index) throws(SQLiteError) in
            let prefix = tag.map { $0.lowercased() + "/" } ?? ""
            var children: [(name: String, notes: [String])] = []
            var seen = Set<String>()
            for (name, _) in try index.tagCounts(under: tag) where name.lowercased().hasPrefix(prefix) {
                guard let first = name.dropFirst(prefix.count).split(separator: "/", omittingEmptySubsequences: true).first,
                    seen.insert(first.lowercased()).inserted
                else { continue }
                let child = (tag.map { $0 + "/" } ?? "") + first
                children.append((String(first), try index.documents(tagged: child, nested: true).map(\.name)))
            }
            let tagged = try tag.map { (tag) throws(SQLiteError) in try index.documents(tagged: tag, nested: false) } ?? []
            return (children, tagged)
        }
    }
}
