/// What ``TextIndex/contents()`` counts: enough to compare the index with the records.
public struct IndexContents: Sendable {
    /// Every document's record name, with whether it was indexed without text.
    public var documents: [String: Bool]
    /// Rows of the `words` table (one per readable document).
    public var textRows: Int
    /// Rows of the `grams` table (one per readable document with a body).
    public var gramRows: Int
    /// Rows of the `titles` table (one per `words` row).
    public var titleRows: Int
    /// Readable documents whose body is not empty (as the `words` table holds them).
    public var bodies: Int
}

extension TextIndex {
    /// The documents and the row counts of each table, of one state of the index.
    ///
    /// - Throws: ``SQLiteError``.
    public func contents() throws(SQLiteError) -> IndexContents {
        try read { () throws(SQLiteError) in
            let documents = try connection.prepare("SELECT name, unreadable FROM docs").rows { ($0.text(0), $0.int(1) != 0) }
            func count(_ sql: String) throws(SQLiteError) -> Int { Int(try connection.prepare(sql).rows { $0.int(0) }.first ?? 0) }
            return IndexContents(
                documents: Dictionary(documents, uniquingKeysWith: { a, _ in a }), textRows: try count("SELECT count(*) FROM words"),
                gramRows: try count("SELECT count(*) FROM grams"), titleRows: try count("SELECT count(*) FROM titles"),
                bodies: try count("SELECT count(*) FROM words WHERE body != ''"))
        }
    }

    /// The title, body and CJK column a document's row holds; nil when it has none.
    ///
    /// - Throws: ``SQLiteError``.
    public func storedText(of name: String) throws(SQLiteError) -> (title: String, body: String, cjk: String)? {
        try connection.prepare("SELECT w.title, w.body, w.cjk FROM docs d JOIN words w ON w.rowid = d.id WHERE d.name = ?").rows([
            .text(name)
        ]) { ($0.text(0), $0.text(1), $0.text(2)) }.first
    }
}

extension TextIndex {
    /// The links, tags and properties a document's rows hold (in the order stored), and its
    /// file name and lookup key; nil when it has no row.
    ///
    /// - Throws: ``SQLiteError``.
    public func storedDerived(of name: String) throws(SQLiteError) -> (
        fileName: String, nameKey: String, links: [IndexedLink], tags: [String], properties: [IndexedProperty]
    )? {
        guard
            let row = try connection.prepare("SELECT id, file_name, name_key FROM docs WHERE name = ?").rows(
                [.text(name)],
                {
                    ($0.int(0), $0.text(1), $0.text(2))
                }
            ).first
        else { return nil }
        let links = try connection.prepare("SELECT key, target, style, line FROM links WHERE doc = ? ORDER BY rowid").rows([.integer(row.0)]
        ) {
            IndexedLink(key: $0.text(0), target: $0.text(1), style: Int($0.int(2)), line: Int($0.int(3)))
        }
        let tags = try connection.prepare("SELECT tag FROM tags WHERE doc = ? ORDER BY rowid").rows([.integer(row.0)]) { $0.text(0) }
        let properties = try connection.prepare("SELECT key, kind, text, number FROM props WHERE doc = ? ORDER BY rowid").rows([
            .integer(row.0)
        ]) {
            IndexedProperty(
                key: $0.text(0), kind: IndexedProperty.Kind(rawValue: $0.text(1)) ?? .text, text: $0.isNull(2) ? nil : $0.text(2),
                number: $0.isNull(3) ? nil : $0.double(3))
        }
        return (row.1, row.2, links, tags, properties)
    }
}
