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
                let contents = FolderContents(database: database, tree: treeForReading(after: changes, from: indexed))
                return try plan(moving: moved, to: folder, fileName: fileName, index: index, changes: changes, contents: contents)
            }
        } ?? nil
    }

    private func plan(
        moving moved: RecordMetadata, to folder: RecordID?, fileName: String, index: TextIndex, changes: ChangeSet,
        contents: FolderContents
    ) throws(SQLiteError) -> LinkRewrites? {
        let id = moved.recordID
        let unindexed = Set(changes.changed.map(\.recordID) + changes.deleted)
        func folderPath(_ folder: RecordID?) throws(SQLiteError) -> String? {
            guard let folder else { return "" }
            return try index.folderPath(ofFolder: folder.recordName)
        }
        func joined(_ folder: String, _ name: String) -> String { folder.isEmpty ? name : folder + "/" + name }
        // Every folder saved since keeps its path, and none was deleted.
        for metadata in changes.changed where metadata.recordType == Folder.recordType {
            guard let stored = try index.folderPath(ofFolder: metadata.recordID.recordName),
                try Self.keepsPath(metadata, stored: stored, folderPath: index.folderPath(ofFolder:), contents)
            else { return nil }
        }
        for deleted in changes.deleted where try index.folderPath(ofFolder: deleted.recordName) != nil { return nil }
        // The moved file's path before the move.
        let oldPath: String
        var arrived: (name: String, path: String)?
        if !unindexed.contains(id) {
            guard let path = try index.path(ofDocument: id.recordName) else { return nil }
            oldPath = path
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
        let others = changes.changed.filter { $0.recordID != id && Self.rowTypes.contains($0.recordType) }
        let texts = database.records(for: [id] + others.filter { $0.recordType == Note.recordType }.map(\.recordID))
        if case .success(let record)? = texts[id], let text = record[FieldName.text]?.stringValue {
            for link in NoteText.scan(text).links where !link.target.isEmpty { looked.insert(NoteIndexing.key(ofTarget: link.target)) }
        }
        func mayShowUnder(_ name: String) -> Bool { Self.mayShow(underKeys: looked, name: name) }
        let linking = Set(try index.linkingDocuments(keys: keys).map(\.name))
        for metadata in others {
            guard let kind = EntryNames.kind(ofRecordType: metadata.recordType) else { return nil }
            if linking.contains(metadata.recordID.recordName) { return nil }
            if mayShowUnder(EntryNames.baseName(FolderContents.storedName(of: metadata, in: database), kind: kind)) { return nil }
            if let old = try index.placement(of: metadata.recordID.recordName), mayShowUnder(old.fileName) { return nil }
            switch texts[metadata.recordID] {
            case .success(let record)?:
                guard let text = record[FieldName.text]?.stringValue else {
                    if record[FieldName.content] == nil { continue }
                    return nil  // text kept as bytes: read by the catch-up
                }
                if NoteText.scan(text).links.contains(where: { keys.contains(NoteIndexing.key(ofTarget: $0.target)) }) { return nil }
            case .failure?: return nil
            case nil: if metadata.recordType == Note.recordType { return nil }
            }
        }
        for deleted in changes.deleted where deleted != id {
            if linking.contains(deleted.recordName) { return nil }
            if let old = try index.placement(of: deleted.recordName), mayShowUnder(old.fileName) { return nil }
        }
        let moves = oldPath == newPath ? [] : [FileMove(oldPath: oldPath, newPath: newPath)]
        return try linkRewrites(for: moves, in: index, token: changes.token, arrived: arrived)
    }

    /// Whether a file shown as `name`, or a namesake of it, may show under one of `keys`: its key,
    /// or that of any base it may be a suffixed name of (`Plan (ab).md` of `Plan`), is one of them
    /// or a suffixed form of one (``EntryNames/suffixed(_:_:)``: `base (suffix)`).
    static func mayShow(underKeys keys: Set<String>, name: String) -> Bool {
        let key = LinkResolver.key(of: name)
        var bases = [key]
        var rest = Substring(key)
        while let open = rest.range(of: " (", options: .backwards) {
            rest = rest[..<open.lowerBound]
            bases.append(String(rest))
        }
        return keys.contains { looked in bases.contains { looked == $0 || looked.hasPrefix($0 + " (") } }
    }
}
