import Foundation
import Index
import RecordStore

/// A rename's plan made on the index as it stands, when the commits it has not indexed yet
/// cannot change that plan: the rename then pays no catch-up (a write transaction of the text
/// index, its FTS rows and commit) in the request. The background indexer writes those commits
/// soon after, as it does after any other request.
///
/// What the plan reads of the index, and why the unindexed commits leave it as it is when none of
/// them is refused below:
/// - the moved file's old path and the new folder's path: the moved record is either indexed and
///   unchanged since, or new since (its path then comes from the store); every folder those
///   commits saved keeps the path the index has (a new mtime, owner or mode);
/// - the notes with a link whose key is the moved file's old or new name: no unindexed note has
///   such a link in its text now, and none of the indexed ones was changed since;
/// - the files a link's key names (the moved note resolves all of its links): no unindexed or
///   deleted file shows, or showed, under one of those keys, or a namesake's suffix of one
///   (`name (x)`), whose holders may change when a namesake comes or goes.
extension NotesSearchIndex {
    /// The rewrites a move of the file `id` to `fileName` in `folder` needs, planned without
    /// catching the index up; nil when the commits since its token may change the plan, or the
    /// index cannot tell (no index, a build under way, a token of another database or expired):
    /// then plan after a catch-up. The plan's token is the store's, checked at its commit.
    /// - Throws: ``SQLiteError`` when the index cannot be read.
    func linkRewritesBeforeCatchingUp(forFile id: RecordID, to folder: RecordID?, fileName: String) throws(SQLiteError)
        -> LinkRewrites?
    {
        try withReader { (index) throws(SQLiteError) -> LinkRewrites? in
            try index.read { () throws(SQLiteError) -> LinkRewrites? in
                guard try !index.isBuilding(), let indexed = try index.token(), let changes = try? database.changes(since: indexed),
                    let moved = database.metadata(for: id)
                else { return nil }
                if changes.changed.count + changes.deleted.count >= Self.hurryAfter { hurryBackgroundIndexing() }
                let contents = FolderContents(database: database, tree: treeForReading(after: changes, from: indexed))
                return try plan(
                    moving: moved, to: folder, fileName: fileName, index: index, indexed: indexed, changes: changes, contents: contents)
            }
        } ?? nil
    }

    /// Commits since the index's token beyond which a plan catches the index up instead
    /// (`scripts/profile.sh rename`, 3,000 renames, wall and daemon CPU a rename: 1,380 and 1,313 µs
    /// at 16, 1,023-1,109 and 1,010-1,097 at 64, 1,024 and 1,070 at 256, 1,064 and 1,377 at 1,024).
    static let unindexedLimit = 256

    /// Records committed after the index's token at which a plan ends the background indexer's pause
    /// (``hurryBackgroundIndexing()``): each rename's plan looks at every one of them, and past
    /// ``unindexedLimit`` the rename catches the index up itself.
    static let hurryAfter = 16

    private func plan(
        moving moved: RecordMetadata, to folder: RecordID?, fileName: String, index: TextIndex, indexed: ChangeToken,
        changes: ChangeSet, contents: FolderContents
    ) throws(SQLiteError) -> LinkRewrites? {
        let id = moved.recordID
        guard changes.changed.count + changes.deleted.count <= Self.unindexedLimit else { return nil }
        func folderPath(_ folder: RecordID?) throws(SQLiteError) -> String? {
            guard let folder else { return "" }
            return try index.folderPath(ofFolder: folder.recordName)
        }
        func joined(_ folder: String, _ name: String) -> String { folder.isEmpty ? name : folder + "/" + name }
        // The moved file's path before the move.
        let oldPath: String
        var arrived: (name: String, path: String)?
        var textChanged = false  // the moved file's text may not be the index's
        if !changes.changed.contains(where: { $0.recordID == id }) {
            guard let path = try index.path(ofDocument: id.recordName) else { return nil }
            oldPath = path
        } else if let held = try index.placement(of: id.recordName) {
            // Committed since the index's token but shown where the index has it (its text, dates
            // or mode changed; an edit, then a rename): the index's path is its path, and its links
            // are read from the store.
            guard held.folder == contents.shownFolder(of: moved)?.recordName, contents.entry(for: id)?.fileName == held.fileName,
                let path = try index.path(ofDocument: id.recordName)
            else { return nil }
            oldPath = path
            textChanged = true
        } else {
            guard try index.placement(of: id.recordName) == nil, let shownIn = try folderPath(contents.shownFolder(of: moved)),
                let name = contents.entry(for: id)?.fileName
            else { return nil }
            oldPath = joined(shownIn, name)
            arrived = (id.recordName, oldPath)
        }
        guard let newFolder = try folderPath(folder) else { return nil }
        let newPath = joined(newFolder, fileName)
        // The keys the plan looks up: the moved file's names, and every link of the moved note.
        let keys: Set<String> = [LinkResolver.key(of: FileMove.lastComponent(oldPath)), LinkResolver.key(of: fileName)]
        var looked = keys
        if moved.recordType == Note.recordType {
            looked.formUnion(try linkKeys(ofNote: moved, indexed: arrived == nil && !textChanged, index: index) ?? [])
        }
        let linking = Set(try index.linkingDocuments(keys: keys).map(\.name))
        let others =
            changes.changed.filter { $0.recordID != id }.map { Either.changed($0) }
            + changes.deleted.filter { $0 != id }.map { Either.deleted($0) }
        for other in others {
            let name = other.recordName
            if linking.contains(name) { return nil }
            let found = try unindexedRecord(other, indexToken: indexed, index: index, contents: contents)
            if found.refuses || !found.linkKeys.isDisjoint(with: keys) { return nil }
            if found.bases.contains(where: { base in looked.contains { $0 == base || $0.hasPrefix(base + " (") } }) { return nil }
        }
        let moves = oldPath == newPath ? [] : [FileMove(oldPath: oldPath, newPath: newPath)]
        return try linkRewrites(
            for: moves, in: index, token: changes.token, arrived: arrived, changedText: textChanged ? id.recordName : nil)
    }

    /// What a plan needs of a record committed (or deleted) after the index's token: kept by
    /// record name for the index's token and the record's change tag, so that a storm of renames
    /// reads and scans each such record once, not once a rename.
    private func unindexedRecord(_ other: Either, indexToken: ChangeToken, index: TextIndex, contents: FolderContents)
        throws(SQLiteError) -> UnindexedRecord
    {
        let name = other.recordName
        let tag = other.metadata?.recordChangeTag
        if let known = unindexedRecords.withLock({ $0[name] }), known.indexToken == indexToken, known.changeTag == tag { return known }
        var found = UnindexedRecord(indexToken: indexToken, changeTag: tag)
        if let old = try index.placement(of: name) { found.bases += Self.bases(ofName: old.fileName) }
        switch other {
        case .deleted:
            found.refuses = try index.folderPath(ofFolder: name) != nil  // a folder's paths change
        case .changed(let metadata) where metadata.recordType == Folder.recordType:
            // A folder saved with the path the index has (a new mtime, owner or mode) changes nothing.
            if let stored = try index.folderPath(ofFolder: name) {
                found.refuses = try !Self.keepsPath(metadata, stored: stored, folderPath: index.folderPath(ofFolder:), contents)
            } else {
                found.refuses = true
            }
        case .changed(let metadata):
            guard Self.rowTypes.contains(metadata.recordType) else { break }
            guard let kind = EntryNames.kind(ofRecordType: metadata.recordType) else {
                found.refuses = true
                break
            }
            found.bases += Self.bases(ofName: EntryNames.baseName(FolderContents.storedName(of: metadata, in: database), kind: kind))
            guard metadata.recordType == Note.recordType else { break }
            if let keys = noteLinkKeys(metadata) { found.linkKeys = keys } else { found.refuses = true }
        }
        unindexedRecords.withLock {
            if $0.count >= Self.unindexedLimit { $0.removeAll() }
            $0[name] = found
        }
        return found
    }

    /// The keys of the links of `note` as they stand: the ones kept for its change tag, else the
    /// index's when it holds the note as it is (`indexed`: it has not changed since the index's
    /// token) and the note is stored as text, else from its text; nil when its text is not read
    /// here. Kept by change tag either way (``noteLinkKeys``), so that the next rename's plan, which
    /// finds a moved note committed after the index's token, reads nothing.
    func linkKeys(ofNote note: RecordMetadata, indexed: Bool, index: TextIndex) throws(SQLiteError) -> Set<String>? {
        if let known = keptLinkKeys(of: note) { return known }
        let name = note.recordID.recordName
        guard indexed, !Self.isStoredAsBytes(note), let held = try index.linkKeys(ofDocument: name) else { return noteLinkKeys(note) }
        rememberLinkKeys(held, of: name, changeTag: note.recordChangeTag)
        return held
    }

    /// Whether a note keeps its bytes apart from its text field (the index reads the text field only).
    static func isStoredAsBytes(_ note: RecordMetadata) -> Bool {
        note.field(FieldName.content) != nil || note.isLarge(FieldName.content)
    }

    /// The keys of the links in the text of the note `metadata` names; nil when its text is not
    /// read here (kept as bytes: the catch-up reads it; or unreadable). Read once per change tag.
    private func noteLinkKeys(_ metadata: RecordMetadata) -> Set<String>? {
        if let known = keptLinkKeys(of: metadata) { return known }
        let name = metadata.recordID.recordName
        let keys: Set<String>?
        switch database.records(for: [metadata.recordID])[metadata.recordID] {
        case .success(let record)?:
            if let text = record[FieldName.text]?.stringValue {
                keys = NoteIndexing.linkKeys(of: text)
            } else {
                keys = record[FieldName.content] != nil ? nil : []
            }
        case .failure?, nil: keys = nil
        }
        if let keys { rememberLinkKeys(keys, of: name, changeTag: metadata.recordChangeTag) }
        return keys
    }

    /// The link keys kept for the note's text at its change tag, if any.
    private func keptLinkKeys(of note: RecordMetadata) -> Set<String>? {
        guard let known = linkKeysByTag.withLock({ $0[note.recordID.recordName] }), known.changeTag == note.recordChangeTag else {
            return nil
        }
        return known.keys
    }

    private func rememberLinkKeys(_ keys: Set<String>, of name: String, changeTag: String?) {
        linkKeysByTag.withLock {
            if $0.count >= Self.unindexedLimit, $0[name] == nil { $0.removeAll() }
            $0[name] = (changeTag, keys)
        }
    }

    /// A commit saved the note `id` again without its text (a rename: a new title or folder): the
    /// link keys known of its text at `oldTag` hold at `newTag` too.
    public func textKept(of id: RecordID, from oldTag: String?, to newTag: String?) {
        linkKeysByTag.withLock {
            guard let known = $0[id.recordName], known.changeTag == oldTag else { return }
            $0[id.recordName] = (newTag, known.keys)
        }
    }

    /// The keys of the names a file shown as `name` may be, or be a suffixed name of (`Plan (ab).md`
    /// of `Plan`): its namesakes show as one of them or as `base (suffix)`
    /// (``EntryNames/suffixed(_:_:)``).
    static func bases(ofName name: String) -> [String] {
        let key = LinkResolver.key(of: name)
        var bases = [key]
        // Each " (" from the end. In an ASCII name by its bytes (0.13 µs a short name): Foundation's
        // `range(of:)` took 1.4 µs, 5% of a rename's plan across folders. Other names keep its
        // search, which treats a "(" a combining mark follows as another character.
        if key.isASCII {
            let bytes = Array(key.utf8)
            for start in stride(from: bytes.count - 2, through: 0, by: -1) where bytes[start] == 0x20 && bytes[start + 1] == 0x28 {
                bases.append(String(decoding: bytes[..<start], as: UTF8.self))
            }
        } else {
            var rest = Substring(key)
            while let open = rest.range(of: " (", options: .backwards) {
                rest = rest[..<open.lowerBound]
                bases.append(String(rest))
            }
        }
        return bases
    }
}

/// A record a plan looks at: committed, or deleted, after the index's token.
private enum Either {
    case changed(RecordMetadata)
    case deleted(RecordID)

    var recordName: String {
        switch self {
        case .changed(let metadata): metadata.recordID.recordName
        case .deleted(let id): id.recordName
        }
    }

    var metadata: RecordMetadata? {
        if case .changed(let metadata) = self { metadata } else { nil }
    }
}

/// What a rename's plan found of a record committed after the index's token.
struct UnindexedRecord: Sendable {
    var indexToken: ChangeToken
    var changeTag: String?
    /// The keys of the names it shows or showed under, and of the bases those may be suffixed
    /// names of.
    var bases: [String] = []
    /// The keys of its links (a note's).
    var linkKeys = Set<String>()
    /// A plan must catch the index up: a folder whose path changes, or text that is not read here.
    var refuses = false
}
