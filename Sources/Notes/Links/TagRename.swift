import Foundation
import Index
import RecordStore

/// A note whose tags a tag rename changes: the record with its new text, ready to save.
public struct TagRewrite: Sendable {
    /// The note, read from the store, with its new `text` (nothing else changed).
    public var record: Record
    /// Its path, as the index names it.
    public var path: String
    /// Each tag that changes, in text order (front matter first): its line, old and new name.
    public var changes: [(line: Int, old: String, new: String)]
}

/// What renaming a tag does: the notes it rewrites and those it cannot.
public struct TagRename: Sendable {
    /// The name renamed (as asked, compared without case) and the new name.
    public var old: String
    public var new: String
    public var notes: [TagRewrite] = []
    /// Notes that have the tag and are left as they are, with why (their bytes are not inline
    /// text; the new text would not read back with the same tags).
    public var notRewritten: [(path: String, reason: String)] = []

    public init(old: String, new: String) {
        self.old = old
        self.new = new
    }

    /// How many tags change, in every note together.
    public var tagCount: Int { notes.reduce(0) { $0 + $1.changes.count } }
}

/// Why a tag rename cannot be planned.
public enum TagRenameError: Error, Sendable, CustomStringConvertible {
    /// `name` is no tag name (`reason` says why).
    case invalidName(String, reason: String)
    /// The index could not be caught up or read.
    case index(SQLiteError)

    public var description: String {
        switch self {
        case .invalidName(let name, let reason): "#\(name.count > 60 ? name.prefix(60) + "…" : name) is no tag name: \(reason)"
        case .index(let error): error.description
        }
    }
}

/// Renaming a tag: `#old` becomes `#new` wherever it is written (`#tag` in the text, entries of
/// the front matter's `tags:`), and so do the tags nested under it (`#old/x` becomes `#new/x`).
/// Tags compare without case (`#Old` is renamed too); `#older` is another tag. Only the name's
/// bytes change (``NoteTag/range``), so the `#`, quotes and everything around stay as written.
/// Renaming onto a tag that exists merges the two.
extension TagRename {
    /// Why `name` (without `#`) cannot be a tag name; nil when it can. A tag name is what
    /// ``NoteText/scan(_:)`` reads after a `#`: letters, combining marks, digits, `_`, `-` and `/`,
    /// not only digits, not ending with `/`, at most 512 bytes.
    public static func problem(withName name: String) -> String? {
        let found = NoteText.scan("#" + name).tags
        if found.count == 1, found[0].name == name { return nil }
        if name.isEmpty { return "it is empty" }
        if name.utf8.count > 512 { return "it is longer than 512 bytes (\(name.utf8.count))" }
        if name.unicodeScalars.contains(where: \.properties.isWhitespace) { return "it holds a space" }
        if name.contains("#") { return "it holds #" }
        if name.hasSuffix("/") { return "it ends with /" }
        if name.allSatisfy(\.isNumber) { return "it is only digits" }
        return "it holds a character other than letters, digits, _, - and /"
    }

    /// `given` without one leading `#`, when that is a tag name; `existing`: a name to rename
    /// from, which need only not be empty (a front matter's `tags: [2024]` is a tag that a `#`
    /// in the text cannot write).
    /// - Throws: ``TagRenameError/invalidName(_:reason:)`` when it is not.
    public static func name(_ given: String, existing: Bool = false) throws(TagRenameError) -> String {
        let name = given.hasPrefix("#") ? String(given.dropFirst()) : given
        if existing, !name.isEmpty { return name }
        if let problem = problem(withName: name) { throw .invalidName(name, reason: problem) }
        return name
    }

    /// What `tag` is called after renaming `old` to `new`: `new` for `old` itself (any case),
    /// `new/rest` for `old/rest`; nil for any other tag.
    public static func renamed(_ tag: String, from old: String, to new: String) -> String? {
        let oldParts = old.split(separator: "/", omittingEmptySubsequences: false)
        let parts = tag.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count >= oldParts.count,
            zip(parts, oldParts).allSatisfy({ $0.lowercased() == $1.lowercased() })
        else { return nil }
        let rest = parts.dropFirst(oldParts.count)
        return rest.isEmpty ? new : new + "/" + rest.joined(separator: "/")
    }

    /// `text` with every tag `old` (and nested under it) renamed to `new`, and the changes; nil
    /// when no tag changes. A result longer than `Note.maxInlineTextBytes` is cut just past that
    /// size (it cannot be kept as text; the caller refuses it by its size). Throws ``TagRenameError/invalidName(_:reason:)`` when a renamed
    /// nested tag would be too long to be a tag.
    public static func rewrite(_ text: String, from old: String, to new: String) throws(TagRenameError) -> (
        text: String, changes: [(line: Int, old: String, new: String)]
    )? {
        let tags = (FrontMatter.parse(text)?.tags ?? []) + NoteText.scan(text).tags
        var edits: [(range: Range<Int>, line: Int, old: String, new: String)] = []
        var checked = Set<String>()  // a note may hold the same tag 100,000 times
        for tag in tags {
            guard let name = renamed(tag.name, from: old, to: new), name != tag.name else { continue }
            if !checked.contains(name) {
                if let problem = problem(withName: name) { throw .invalidName(name, reason: problem) }
                checked.insert(name)
            }
            edits.append((tag.range, tag.line, tag.name, name))
        }
        guard !edits.isEmpty else { return nil }
        edits.sort { $0.range.lowerBound < $1.range.lowerBound }
        var out: [UInt8] = []
        let bytes = Array(text.utf8)
        // A longer name in every one of millions of tags could ask for gigabytes: the text is built
        // no further than a note holds inline (and one edit), and a longer one is cut there: it
        // cannot be kept as text, and the plan refuses it by its size.
        let limit = Note.maxInlineTextBytes
        out.reserveCapacity(min(limit, bytes.count + edits.count * max(0, new.utf8.count - old.utf8.count)))
        var position = 0
        for edit in edits {
            out.append(contentsOf: bytes[position..<edit.range.lowerBound])
            out.append(contentsOf: edit.new.utf8)
            position = edit.range.upperBound
            if out.count > limit { break }
        }
        if out.count <= limit { out.append(contentsOf: bytes[position...]) }
        return (String(decoding: out, as: UTF8.self), edits.map { ($0.line, $0.old, $0.new) })
    }

    /// The tags of `text` (front matter first, then the text's) by name, to check a rewrite.
    static func tagNames(_ text: String) -> [String] {
        (FrontMatter.parse(text)?.tags ?? []).map(\.name) + NoteText.scan(text).tags.map(\.name)
    }
}

extension NotesSearchIndex {
    /// The plan of renaming tag `old` to `new` (a leading `#` of either is dropped): every note
    /// the index says has `old` or a tag nested under it, read from the store (its text there is
    /// the truth), with its tags renamed (``TagRename/rewrite(_:from:to:)``). Notes stored as an
    /// asset rather than inline text are listed in ``TagRename/notRewritten``, and so is a note
    /// whose new text would not read back with exactly the tags expected (a front-matter entry
    /// that the new name would make read another way) or would be too large to keep inline.
    ///
    /// Catches the index up first. Nothing is saved: the caller saves ``TagRename/notes`` in one
    /// commit.
    /// - Throws: ``TagRenameError/invalidName(_:reason:)`` when `new` is no tag name or `old` is empty;
    ///   ``TagRenameError/index(_:)`` when the index cannot be caught up or read.
    public func tagRename(from old: String, to new: String) throws(TagRenameError) -> TagRename {
        let new = try TagRename.name(new)
        let old = try TagRename.name(old, existing: true)
        var plan = TagRename(old: old, new: new)
        guard old != new else { return plan }
        let documents: [(name: String, path: String)]
        do {
            documents = try readCurrent { (index) throws(SQLiteError) in try index.documents(tagged: old, nested: true) }
        } catch { throw .index(error) }
        let records = database.records(for: documents.map { RecordID(recordName: $0.name) })
        for document in documents {
            guard case .success(let record)? = records[RecordID(recordName: document.name)], record.recordType == Note.recordType
            else { continue }
            guard record[FieldName.content] == nil, let text = record[FieldName.text]?.stringValue else {
                plan.notRewritten.append((document.path, "the note is not stored as text"))
                continue
            }
            guard let (newText, changes) = try TagRename.rewrite(text, from: old, to: new) else { continue }
            // First the size: a text over the limit is cut where it passed it (``TagRename/rewrite(_:from:to:)``).
            if newText.utf8.count > Note.maxInlineTextBytes {
                plan.notRewritten.append((document.path, "its new text would be too large to keep as text"))
                continue
            }
            let expected = TagRename.tagNames(text).map { TagRename.renamed($0, from: old, to: new) ?? $0 }
            if TagRename.tagNames(newText) != expected {
                plan.notRewritten.append((document.path, "its new text would not read back with the renamed tags"))
                continue
            }
            var rewritten = record
            rewritten[FieldName.text] = .string(newText)
            plan.notes.append(TagRewrite(record: rewritten, path: document.path, changes: changes))
        }
        return plan
    }
}
