import Foundation
import Index
import RecordStore

extension NotesSearchIndex {
    /// How many records' stored text ``audit()`` compares with the records, spread over them.
    public static let auditSample = 64

    /// Compares the index with the records; what does not agree, one line each (none when it
    /// agrees, is absent or cannot be compared). Reports an index whose token is ahead of the
    /// journal (of another database or damaged: it would miss every new commit). Otherwise
    /// catches it up (when it can be written; being behind is no problem), then compares the
    /// record names, each table's row count, and the stored title, text, links, tags and properties
    /// of a sample.
    public func audit() -> [String] {
        guard let index = try? TextIndex(databasePath: database.path, create: false) else { return [] }
        defer { index.close() }
        try? database.refresh()
        let current = database.currentToken
        guard let token = try? index.token(), (try? index.isBuilding()) == false else { return [] }
        if token.isNewer(than: current) {
            return ["its token \(token) is ahead of the journal (\(current)): it would miss every new note"]
        }
        // Another process (a mount) may index commits meanwhile: compare at one token, or not at all.
        for _ in 0..<3 {
            try? database.refresh()
            if (try? index.token()) != database.currentToken { try? catchUp() }
            do throws(SQLiteError) {
                let problems = try index.read { () throws(SQLiteError) -> [String]? in
                    guard try index.token() == database.currentToken else { return nil }
                    return try compare(index)
                }
                if let problems { return problems }
            } catch {
                return ["it cannot be read (\(error.description))"]
            }
        }
        return []
    }

    /// What does not agree between the index (in a read transaction at the store's token) and the records.
    private func compare(_ index: TextIndex) throws(SQLiteError) -> [String] {
        let contents = try index.contents()
        let records = database.metadata { Self.rowTypes.contains($0.recordType) }
        var problems: [String] = []
        let expected = Set(records.map(\.recordID.recordName))
        let missing = expected.subtracting(contents.documents.keys)
        let extra = Set(contents.documents.keys).subtracting(expected)
        if !missing.isEmpty { problems.append("\(missing.count) of \(expected.count) records have no row (record \(missing.min() ?? ""))") }
        if !extra.isEmpty { problems.append("\(extra.count) rows are of no record (record \(extra.min() ?? ""))") }
        let readable = contents.documents.values.filter { !$0 }.count
        if contents.textRows != readable { problems.append("\(contents.textRows) text rows for \(readable) readable records") }
        if contents.titleRows != contents.textRows {
            problems.append("\(contents.titleRows) title rows for \(contents.textRows) text rows")
        }
        if contents.gramRows != contents.bodies { problems.append("\(contents.gramRows) substring rows for \(contents.bodies) texts") }
        let names = records.map(\.recordID).sorted { $0.recordName < $1.recordName }
        let step = max(1, names.count / Self.auditSample)
        let sample = stride(from: 0, to: names.count, by: step).map { names[$0] }
        let read = database.records(for: sample)
        for id in sample {
            guard case .success(let record) = read[id], contents.documents[id.recordName] == false else { continue }
            let document = Self.document(record, folder: nil, fileName: "")
            guard let stored = try index.storedText(of: id.recordName) else {
                problems.append("record \(id.recordName) has no text row")
                continue
            }
            if stored.title != document.title || stored.body != document.body || stored.cjk != document.cjk {
                problems.append("record \(id.recordName): the text indexed is not the record's")
            }
            if let derived = try index.storedDerived(of: id.recordName) {
                if derived.nameKey != LinkResolver.key(of: derived.fileName) {
                    problems.append("record \(id.recordName): its link lookup key is not its file name's")
                }
                if derived.links != document.links || derived.tags != document.tags || derived.properties != document.properties {
                    problems.append("record \(id.recordName): the links, tags or properties indexed are not the record's")
                }
            }
        }
        return problems
    }
}
