import CSQLite
import Foundation
import RecordStore
import SQLite

/// A link of a note as the index keeps it: enough to resolve it again without the note's text.
public struct IndexedLink: Sendable, Hashable {
    /// The lookup key of the destination's last component (``LinkResolver``'s key).
    public var key: String
    /// The destination as written, decoded, without its heading.
    public var target: String
    /// 0: a wiki link, 1: a markdown link.
    public var style: Int
    public var line: Int

    public init(key: String, target: String, style: Int, line: Int) {
        self.key = key
        self.target = target
        self.style = style
        self.line = line
    }
}

/// A front-matter property as the index keeps it: one row per value (a list has one per item).
public struct IndexedProperty: Sendable, Hashable {
    public enum Kind: String, Sendable { case text, number, bool, date, list }
    /// Lowercased.
    public var key: String
    public var kind: Kind
    /// Text and list items; bools as `true`/`false`.
    public var text: String?
    /// Numbers, and dates as seconds since 2001-01-01 UTC.
    public var number: Double?

    public init(key: String, kind: Kind, text: String?, number: Double?) {
        self.key = key
        self.kind = kind
        self.text = text
        self.number = number
    }
}

/// A document that links to a key, with where it is.
public struct LinkingDocument: Sendable, Hashable {
    public var name: String
    public var path: String
    public var links: [IndexedLink]
}

extension IndexWriter {
    /// Saves a document's links, tags and properties (its old ones removed first by the caller).
    func saveDerived(_ document: IndexedDocument, id: Int64) throws(SQLiteError) {
        if !document.links.isEmpty {
            let insert = try connection.cachedStatement("INSERT INTO links(doc, key, target, style, line) VALUES (?, ?, ?, ?, ?)")
            for link in document.links {
                try insert.run([.integer(id), .text(link.key), .text(link.target), .integer(Int64(link.style)), .integer(Int64(link.line))])
            }
        }
        if !document.tags.isEmpty {
            let insert = try connection.cachedStatement("INSERT INTO tags(doc, tag, folded) VALUES (?, ?, ?)")
            for tag in document.tags { try insert.run([.integer(id), .text(tag), .text(tag.lowercased())]) }
        }
        if !document.properties.isEmpty {
            let insert = try connection.cachedStatement("INSERT INTO props(doc, key, kind, text, number) VALUES (?, ?, ?, ?, ?)")
            for property in document.properties {
                try insert.run([
                    .integer(id), .text(property.key), .text(property.kind.rawValue), property.text.map(SQLiteValue.text) ?? .null,
                    property.number.map(SQLiteValue.real) ?? .null,
                ])
            }
        }
    }

    func removeDerived(_ id: Int64) throws(SQLiteError) {
        for table in ["links", "tags", "props"] {
            try connection.cachedStatement("DELETE FROM \(table) WHERE doc = ?").run([.integer(id)])
        }
    }
}

extension TextIndex {
    /// The path of a document row's file (`d` the docs alias, `f` the folders one).
    static let pathColumn = "CASE WHEN f.path IS NULL OR f.path = '' THEN d.file_name ELSE f.path || '/' || d.file_name END"

    /// The paths of every document whose file name has the lookup key `key`.
    /// - Throws: ``SQLiteError``.
    public func paths(withKey key: String) throws(SQLiteError) -> [String] {
        try connection.cachedStatement(
            "SELECT \(Self.pathColumn) FROM docs d LEFT JOIN folders f ON f.name = d.folder WHERE d.name_key = ?"
        )
        .rows([.text(key)]) { $0.text(0) }
    }

    /// The keys of a document's links as the index holds them (of a note's text field); nil when
    /// it has no row or its record could not be read.
    /// - Throws: ``SQLiteError``.
    public func linkKeys(ofDocument name: String) throws(SQLiteError) -> Set<String>? {
        let rows = try connection.cachedStatement(
            "SELECT l.key FROM docs d LEFT JOIN links l ON l.doc = d.id WHERE d.name = ? AND d.unreadable = 0"
        ).rows([.text(name)]) { $0.isNull(0) ? nil : $0.text(0) }
        return rows.isEmpty ? nil : Set(rows.compactMap { $0 })
    }

    /// The documents with a link whose key is one of `keys`, with those links (all of them when
    /// `keys` is nil), in path order.
    /// - Throws: ``SQLiteError``.
    public func linkingDocuments(keys: Set<String>?) throws(SQLiteError) -> [LinkingDocument] {
        let select = """
            SELECT d.name, \(Self.pathColumn), l.key, l.target, l.style, l.line FROM links l JOIN docs d ON d.id = l.doc
            LEFT JOIN folders f ON f.name = d.folder
            """
        var rows: [(String, String, IndexedLink)] = []
        func row(_ r: Statement) -> (String, String, IndexedLink) {
            (r.text(0), r.text(1), IndexedLink(key: r.text(2), target: r.text(3), style: Int(r.int(4)), line: Int(r.int(5))))
        }
        if let keys {
            let statement = try connection.cachedStatement(select + " WHERE l.key = ?")
            for key in keys.sorted() { rows += try statement.rows([.text(key)], row) }
        } else {
            rows = try connection.prepare(select).rows([], row)
        }
        var byName: [String: LinkingDocument] = [:]
        for (name, path, link) in rows { byName[name, default: LinkingDocument(name: name, path: path, links: [])].links.append(link) }
        return byName.values.map { document in
            var sorted = document
            sorted.links.sort { ($0.line, $0.target) < ($1.line, $1.target) }
            return sorted
        }.sorted { $0.path.utf8.lexicographicallyPrecedes($1.path.utf8) }
    }

    /// The text the index holds of a document (a note's body); nil when it has none.
    /// - Throws: ``SQLiteError``.
    public func body(ofDocument name: String) throws(SQLiteError) -> String? {
        try connection.cachedStatement("SELECT w.body FROM docs d JOIN words w ON w.rowid = d.id WHERE d.name = ?").rows([.text(name)]) {
            $0.text(0)
        }.first
    }

    /// The record name and path of the document at `path` (as the mount shows it).
    /// - Throws: ``SQLiteError``.
    public func document(atPath path: String) throws(SQLiteError) -> (name: String, recordType: String)? {
        let slash = path.lastIndex(of: "/")
        let folder = slash.map { String(path[..<$0]) } ?? ""
        let file = slash.map { String(path[path.index(after: $0)...]) } ?? path
        let sql =
            folder.isEmpty
            ? "SELECT d.name, d.type FROM docs d WHERE d.folder IS NULL AND d.file_name = ?1"
            : "SELECT d.name, d.type FROM docs d JOIN folders f ON f.name = d.folder WHERE f.path = ?2 AND d.file_name = ?1"
        let values: [SQLiteValue] = folder.isEmpty ? [.text(file)] : [.text(file), .text(folder)]
        return try connection.cachedStatement(sql).rows(values) { (name: $0.text(0), recordType: $0.text(1)) }.first
    }

    /// Every tag with the number of notes that have it, by folded name (the spelling shown is the
    /// most common one, then the first in byte order); with `under`, only the tags nested under
    /// that one (`under` itself excluded).
    /// - Throws: ``SQLiteError``.
    public func tagCounts(under parent: String? = nil) throws(SQLiteError) -> [(tag: String, count: Int)] {
        // Nested tags are a range of the folded names: `p/` up to `p0` (`0` follows `/`).
        let range = parent.map { (tag: String) -> String in " WHERE folded > ?1 || '/' AND folded < ?1 || '0'" } ?? ""
        let values: [SQLiteValue] = parent.map { [.text($0.lowercased())] } ?? []
        let rows = try connection.prepare("SELECT folded, tag, count(DISTINCT doc) FROM tags\(range) GROUP BY folded, tag").rows(values) {
            ($0.text(0), $0.text(1), Int($0.int(2)))
        }
        var spelling: [String: (String, Int)] = [:]
        var counts: [String: Int] = [:]
        for (folded, tag, count) in rows {
            counts[folded, default: 0] += count
            if let best = spelling[folded], best.1 > count || (best.1 == count && best.0.utf8.lexicographicallyPrecedes(tag.utf8)) {
                continue
            }
            spelling[folded] = (tag, count)
        }
        // A note with two spellings of one tag counts once.
        let distinct = try connection.prepare("SELECT folded, count(DISTINCT doc) FROM tags\(range) GROUP BY folded").rows(values) {
            ($0.text(0), Int($0.int(1)))
        }
        for (folded, count) in distinct { counts[folded] = count }
        return counts.keys.sorted().map { (tag: spelling[$0]?.0 ?? $0, count: counts[$0] ?? 0) }
    }

    /// The record names and paths of the documents tagged `tag` (case-insensitive), and with
    /// `nested`, of those tagged with a tag under it (`tag/…`), in path order.
    /// - Throws: ``SQLiteError``.
    public func documents(tagged tag: String, nested: Bool) throws(SQLiteError) -> [(name: String, path: String)] {
        let folded = tag.lowercased()
        var sql = """
            SELECT DISTINCT d.name, \(Self.pathColumn) FROM tags t JOIN docs d ON d.id = t.doc LEFT JOIN folders f ON f.name = d.folder
            WHERE t.folded = ?1
            """
        if nested { sql += " OR (t.folded >= ?1 || '/' AND t.folded < ?1 || '0')" }
        return try connection.prepare(sql).rows([.text(folded)]) { (name: $0.text(0), path: $0.text(1)) }.sorted {
            $0.path.utf8.lexicographicallyPrecedes($1.path.utf8)
        }
    }

    /// Every document's properties, for the documents that have any (by record name).
    /// - Throws: ``SQLiteError``.
    public func properties(ofDocumentsWithKey key: String) throws(SQLiteError) -> [String: [IndexedProperty]] {
        let rows = try connection.prepare(
            "SELECT d.name, p.key, p.kind, p.text, p.number FROM props p JOIN docs d ON d.id = p.doc WHERE p.key = ?"
        ).rows([.text(key.lowercased())]) { row in
            (
                row.text(0),
                IndexedProperty(
                    key: row.text(1), kind: IndexedProperty.Kind(rawValue: row.text(2)) ?? .text, text: row.isNull(3) ? nil : row.text(3),
                    number: row.isNull(4) ? nil : row.double(4))
            )
        }
        return Dictionary(grouping: rows, by: \.0).mapValues { $0.map(\.1) }
    }
}

extension TextIndex {
    /// The paths of every document in the folder at `folderPath` and the folders under it.
    /// - Throws: ``SQLiteError``.
    public func documentPaths(underFolder folderPath: String) throws(SQLiteError) -> [String] {
        try connection.prepare(
            """
            SELECT \(Self.pathColumn) FROM docs d JOIN folders f ON f.name = d.folder
            WHERE f.path = ?1 OR substr(f.path, 1, length(?1) + 1) = ?1 || '/'
            """
        ).rows([.text(folderPath)]) { $0.text(0) }
    }
}

extension TextIndex {
    /// The path of a document by record name; nil when it has no row.
    /// - Throws: ``SQLiteError``.
    public func path(ofDocument name: String) throws(SQLiteError) -> String? {
        try connection.cachedStatement("SELECT \(Self.pathColumn) FROM docs d LEFT JOIN folders f ON f.name = d.folder WHERE d.name = ?")
            .rows([
                .text(name)
            ]) { $0.text(0) }.first
    }

    /// The folder a document is in (nil: the root) and the file name it shows under there; nil
    /// when it has no row.
    /// - Throws: ``SQLiteError``.
    public func placement(of name: String) throws(SQLiteError) -> (folder: String?, fileName: String)? {
        let rows = try connection.cachedStatement("SELECT folder, file_name FROM docs WHERE name = ?").rows([.text(name)]) {
            ($0.isNull(0) ? nil : $0.text(0), $0.text(1))
        }
        return rows.first.map { (folder: $0.0, fileName: $0.1) }
    }

    /// The path of a folder by record name (nil: the root, or a folder it does not know).
    /// - Throws: ``SQLiteError``.
    public func folderPath(ofFolder name: String) throws(SQLiteError) -> String? {
        try connection.cachedStatement("SELECT path FROM folders WHERE name = ?").rows([.text(name)]) { $0.text(0) }.first
    }
}
