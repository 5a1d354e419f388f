import Foundation
import Index
import RecordStore

/// A note whose links change because files moved: the record with its new text, ready to save in
/// the same commit as the move.
public struct LinkRewrite: Sendable {
    /// The note, read from the store, with its new `text` (nothing else changed).
    public var record: Record
    /// Its path after the move.
    public var path: String
    /// How many links were rewritten.
    public var count: Int
}

/// What a move does to links.
public struct LinkRewrites: Sendable {
    public var notes: [LinkRewrite] = []
    /// Links that resolved before and cannot be written to resolve again (a wiki link to a name
    /// with `|`, `#` or `]]`), and notes whose bytes are not inline text: left as they are.
    public var leftBroken: [(path: String, line: Int, target: String)] = []
    /// The store's state these were found at (the index's token): the commit that saves them
    /// must be refused when anything was committed after it (`modify(…, unchangedSince:)`), or a
    /// note committed meanwhile with a link to what moved would be missed. Nil: nothing was
    /// looked up (no index, rewriting off).
    public var token: ChangeToken?

    public init() {}
}

/// What a rename moves, as the mount and the CLI see it (names as the mount shows them).
public enum MovedItem: Sendable {
    /// A note or an attachment, to `fileName` in `folder` (nil: the root).
    case file(RecordID, folder: RecordID?, fileName: String)
    /// A folder and everything under it, to `name` in `parent` (nil: the root).
    case folder(RecordID, parent: RecordID?, name: String)
}

extension NotesSearchIndex {
    /// The rewrites that keep every link pointing where it pointed when `item` moves (see
    /// ``linkRewrites(for:)-([FileMove])``); the paths before the move are the index's.
    /// - Throws: ``SQLiteError`` when the index cannot be caught up or read.
    ///
    /// `revising`: a plan made earlier for the same move whose commit was refused because other
    /// commits came after its token: only the notes those commits changed are planned again, and
    /// the earlier plan's other notes kept (a plan of 1,000 notes is not made again from scratch
    /// while other processes keep committing). When the commits since cannot be listed, all of it
    /// is planned again.
    public func linkRewrites(for item: MovedItem, revising earlier: LinkRewrites? = nil) throws(SQLiteError) -> LinkRewrites {
        // Most renames follow commits that cannot change their plan: planned on the index as it
        // stands, they skip a catch-up (a write transaction of the text index) in the request.
        if earlier == nil, case .file(let id, let folder, let fileName) = item,
            let plan = try linkRewritesBeforeCatchingUp(forFile: id, to: folder, fileName: fileName)
        {
            return plan
        }
        var changedNames: Set<String>?
        let plan = try readCurrent { (index) throws(SQLiteError) -> LinkRewrites in
            // Listed once the index is caught up, so that they hold every change up to its token,
            // which the plan takes: listed before, a commit another process made between the list
            // and the catch-up was in neither the earlier plan nor this one, and the rename's commit
            // (checked against this token) missed that note's link.
            if let earlier, let token = earlier.token, let changes = try? database.changes(since: token) {
                changedNames = Set(changes.changed.map(\.recordID.recordName) + changes.deleted.map(\.recordName))
            }
            func folderPath(_ folder: RecordID?) throws(SQLiteError) -> String? {
                guard let folder else { return "" }
                return try index.folderPath(ofFolder: folder.recordName)
            }
            func joined(_ folder: String, _ name: String) -> String { folder.isEmpty ? name : folder + "/" + name }
            var moves: [FileMove] = []
            switch item {
            case .file(let id, let folder, let fileName):
                if let old = try index.path(ofDocument: id.recordName), let newFolder = try folderPath(folder) {
                    moves = [FileMove(oldPath: old, newPath: joined(newFolder, fileName))]
                }
            case .folder(let id, let parent, let name):
                if let old = try index.folderPath(ofFolder: id.recordName), let newParent = try folderPath(parent) {
                    let new = joined(newParent, name)
                    moves = try index.documentPaths(underFolder: old).map {
                        FileMove(oldPath: $0, newPath: new + String(decoding: Array($0.utf8.dropFirst(old.utf8.count)), as: UTF8.self))
                    }
                }
            }
            return try linkRewrites(for: moves.filter { $0.oldPath != $0.newPath }, in: index, onlyNotes: changedNames)
        }
        guard let earlier, let changedNames else { return plan }
        var merged = plan
        merged.notes = earlier.notes.filter { !changedNames.contains($0.record.recordID.recordName) } + plan.notes
        merged.leftBroken = earlier.leftBroken + plan.leftBroken
        return merged
    }

    /// The rewrites that keep every link pointing where it pointed when the files of `moves` move:
    /// links that resolved to a moved file are rewritten to resolve to it at its new path, links
    /// that would resolve to another file after the move (a name that became ambiguous) are
    /// rewritten to keep their target, and a moved note's own relative links are rewritten for its
    /// new folder. Each link keeps its form (see ``LinkRewriter``).
    ///
    /// Catches the index up first, so it knows every committed link; reads the notes it rewrites
    /// from the store (their text there is the truth).
    /// - Throws: ``SQLiteError`` when the index cannot be caught up or read.
    public func linkRewrites(for moves: [FileMove]) throws(SQLiteError) -> LinkRewrites {
        guard !moves.isEmpty else { return LinkRewrites() }
        return try readCurrent { (index) throws(SQLiteError) in try linkRewrites(for: moves, in: index) }
    }

    /// `onlyNotes`: plan only these notes (by record name); nil: every note the moves concern.
    /// `token`: the store's state the index stands for (nil: the index's own token). `arrived`: a
    /// file the index has no row for yet (committed after its token) at its path before the moves.
    /// `changedText`: a moved note (by record name) whose text was committed after the index's
    /// token: read, whatever links the index has of it.
    func linkRewrites(
        for moves: [FileMove], in index: TextIndex, onlyNotes: Set<String>? = nil, token: ChangeToken? = nil,
        arrived: (name: String, path: String)? = nil, changedText: String? = nil
    ) throws(SQLiteError) -> LinkRewrites {
        var result = LinkRewrites()
        if let token { result.token = token } else { result.token = try index.token() }
        guard !moves.isEmpty else { return result }
        let moveMap = Dictionary(moves.map { ($0.oldPath, $0.newPath) }, uniquingKeysWith: { a, _ in a })
        var keys = Set<String>()
        for move in moves {
            keys.insert(LinkResolver.key(of: FileMove.lastComponent(move.oldPath)))
            keys.insert(LinkResolver.key(of: FileMove.lastComponent(move.newPath)))
        }
        // The notes with a link of one of those keys, and the moved notes (their relative links).
        var sources: [String: String] = [:]  // record name → path before the move
        for document in try index.linkingDocuments(keys: keys) { sources[document.name] = document.path }
        for move in moves where EntryNames.isNoteFileName(FileMove.lastComponent(move.oldPath)) {
            guard let document = try index.document(atPath: move.oldPath) else { continue }
            // A note whose text has no link has none to rewrite: not read again when its links are
            // known (the plan's, or the index's); one stored as bytes is, to be reported.
            if document.name != changedText, let metadata = database.metadata(for: RecordID(recordName: document.name)),
                !Self.isStoredAsBytes(metadata),
                try linkKeys(ofNote: metadata, indexed: true, index: index)?.isEmpty == true
            {
                continue
            }
            sources[document.name] = move.oldPath
        }
        if let arrived, EntryNames.isNoteFileName(FileMove.lastComponent(arrived.path)) { sources[arrived.name] = arrived.path }
        if let onlyNotes { sources = sources.filter { onlyNotes.contains($0.key) } }
        let before = IndexLinkTargets(index: index)
        if let arrived { before.add(arrived.path) }
        let after = MovedLinkTargets(base: before, moves: moveMap)
        let names = sources.keys.sorted()
        let records = database.records(for: names.map { RecordID(recordName: $0) })
        for name in names {
            guard let oldPath = sources[name], case .success(let record)? = records[RecordID(recordName: name)],
                record.recordType == Note.recordType
            else { continue }
            let newPath = moveMap[oldPath] ?? oldPath
            guard record[FieldName.content] == nil, let text = record[FieldName.text]?.stringValue else {
                result.leftBroken.append((newPath, 0, "(the note is not stored as text: its links are left as they are)"))
                continue
            }
            let moved = newPath != oldPath
            var edits: [(range: Range<Int>, text: String)] = []
            let bytes = Array(text.utf8)
            for link in NoteText.scan(text).links {
                if !moved, !keys.contains(NoteIndexing.key(ofTarget: link.target)) { continue }
                guard let target = LinkResolver.resolve(link, from: oldPath, in: before) else { continue }
                let expected = moveMap[target] ?? (target == oldPath ? newPath : target)
                // A markdown link that read as a relative path stays one (other tools read it so).
                let relative = LinkRewriter.readsAsRelative(link, from: oldPath, naming: target)
                if LinkResolver.resolve(link, from: newPath, in: after) == expected,
                    !relative || LinkRewriter.readsAsRelative(link, from: newPath, naming: expected)
                {
                    continue
                }
                let original = Substring(decoding: bytes[link.targetRange], as: UTF8.self)
                guard
                    let replacement = LinkRewriter.newTarget(
                        for: link, writtenAs: original, from: newPath, to: expected, in: after, keepingRelative: relative)
                else {
                    result.leftBroken.append((newPath, link.line, link.target))
                    continue
                }
                edits.append((link.targetRange, replacement))
            }
            guard !edits.isEmpty else { continue }
            var out = bytes
            for edit in edits.sorted(by: { $0.range.lowerBound > $1.range.lowerBound }) {
                out.replaceSubrange(edit.range, with: Array(edit.text.utf8))
            }
            var rewritten = record
            rewritten[FieldName.text] = .string(String(decoding: out, as: UTF8.self))
            result.notes.append(LinkRewrite(record: rewritten, path: newPath, count: edits.count))
        }
        if let failure = before.failure { throw failure }
        return result
    }
}
