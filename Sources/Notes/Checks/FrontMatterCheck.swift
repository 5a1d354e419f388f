import Foundation
import RecordStore

/// fsck's notice of notes whose front matter could not be read in full (``FrontMatter/error``):
/// such a note keeps its text as written, and its unread properties are missing from queries and
/// the index. A notice, not a problem: nothing in the store is damaged, and a save never refuses
/// such a text.
public enum FrontMatterCheck {
    /// One line for each note whose front matter has an error, `PATH: front matter not read: line N: …`,
    /// in path order (a note no folder shows is named by its record name).
    /// - Throws: ``NotesError/store(_:)`` when the notes cannot be read.
    public static func notices(in database: RecordDatabase, contents: FolderContents) throws(NotesError) -> [String] {
        let predicate: RecordStore.Predicate
        do { predicate = try RecordStore.Predicate(format: "text BEGINSWITH %@", .string("---")) } catch { throw .store(error) }
        var notices: [(path: String, line: String)] = []
        for record in try NoteQuery.storeRecords(Query(recordType: Note.recordType, predicate: predicate), limit: nil, in: database) {
            guard case .string(let text)? = record[FieldName.text], let error = reason(text) else { continue }
            let path = contents.entry(for: record.recordID)?.displayPath ?? "record \(record.recordID.recordName)"
            notices.append((path, "\(path): front matter not read: \(error)"))
        }
        return notices.sorted { $0.path.utf8.lexicographicallyPrecedes($1.path.utf8) }.map(\.line)
    }

    /// Why the front matter of `text` is not read in full: ``FrontMatter/error``, or a block that
    /// closes beyond ``FrontMatterBlock/maximumBytes`` (then none of it is read); nil otherwise.
    static func reason(_ text: String) -> String? {
        if let frontMatter = FrontMatter.parse(text) { return frontMatter.error }
        guard text.utf8.count > FrontMatterBlock.maximumBytes else { return nil }
        let lines = text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        func isFence(_ line: Substring.UTF8View.SubSequence, closing: Bool) -> Bool {
            let trimmed = String(decoding: line, as: UTF8.self).trimmingCharacters(in: CharacterSet(charactersIn: " \t\r"))
            return trimmed == "---" || (closing && trimmed == "...")
        }
        guard let first = lines.first, isFence(first, closing: false) else { return nil }
        var bytes = first.count + 1
        for line in lines.dropFirst() {
            bytes += line.count + 1
            if isFence(line, closing: true) {
                return "a block of \(bytes) bytes, over the \(FrontMatterBlock.maximumBytes) read as properties"
            }
        }
        return nil
    }
}
