import FUSE
import Foundation
import Notes
import RecordStore

/// Renames keep links right: a rename of a note, an attachment or a folder saves, in its own
/// commit, every note whose links it would otherwise break (``NotesSearchIndex/linkRewrites(for:)``),
/// so no moment exists where such a link is broken and one history step undoes both.
///
/// A rewritten note gets a new mtime and ctime, its clean open buffers take the new bytes and the
/// kernel drops its pages; a buffer with unsaved writes is not touched: its save then meets a
/// newer record, and the rule of the conflict copy applies. Nothing is rewritten with
/// `-o nolinks`, or when the index cannot answer (logged; the rename itself goes on).
extension NotesFileSystem {
    /// The index renames ask, nil with `-o nolinks` or without one.
    var linkIndex: NotesSearchIndex? {
        options.noLinkRewriting ? nil : searchBox.withLock { $0?.notesIndex }
    }

    /// Plans the rewrites a move of `item` needs and runs `commit` with them, whose modify must
    /// pass `rewrites.token` as `unchangedSince`: when another process committed after the plan
    /// (a note that links to what moves, say), the notes they changed are planned again
    /// (``NotesSearchIndex/linkRewrites(for:revising:)``), and after two refused tries the plans
    /// and commits hold other processes' commits off (``LinkRewriteCommit``), so no such note is
    /// missed.
    func withLinkRewrites<T>(for item: MovedItem, _ commit: (LinkRewrites) throws -> T) throws -> T {
        let outcome = try LinkRewriteCommit.run(on: database, plan: { linkRewrites(for: item, revising: $0) }, commit: commit)
        if outcome.unchecked {
            Log.warning("links: this process kept committing during a rename: committed without waiting for its commits")
        }
        return outcome.value
    }

    /// The notes a move of `item` rewrites; none when rewriting is off or the index cannot answer.
    func linkRewrites(for item: MovedItem, revising earlier: LinkRewrites? = nil) -> LinkRewrites {
        guard let index = linkIndex else { return LinkRewrites() }
        do { return try index.linkRewrites(for: item, revising: earlier) } catch {
            Log.warning("links: not rewritten for this rename: \(error.description)")
            return LinkRewrites()
        }
    }

    /// The rewritten notes as records for the rename's modify (mtime now, ctime stamped); a note
    /// that is also `renamed` is left out: ``mergeRewrite(_:into:)`` puts its text in that record.
    func rewrittenRecords(_ rewrites: LinkRewrites, except renamed: RecordID? = nil, _ state: inout FileSystemState) -> [Record] {
        rewrittenRecords(rewrites.notes.map(\.record).filter { $0.recordID != renamed }, &state)
    }

    /// `records`, notes read from the store with a new text, as records for a modify: mtime now,
    /// ctime stamped.
    func rewrittenRecords(_ records: [Record], _ state: inout FileSystemState) -> [Record] {
        let now = FileTime.now
        return records.map { rewritten in
            var record = rewritten
            Self.setModificationTime(now, of: &record)
            if let identity = database.metadata(for: record.recordID)?.identity {
                Self.stampChange(&record, inode: identity, &state)
            }
            return record
        }
    }

    /// The renamed note's own rewritten text (its relative links, or a link to itself), in the
    /// record the rename saves.
    func mergeRewrite(_ rewrites: LinkRewrites, into record: inout Record) {
        guard let own = rewrites.notes.first(where: { $0.record.recordID == record.recordID }) else { return }
        record[FieldName.text] = own.record[FieldName.text]
        Self.setModificationTime(.now, of: &record)
    }

    /// After the commit: clean open buffers of rewritten notes take their new bytes, and the
    /// kernel drops their pages and attributes.
    func finishRewrites(_ rewrites: LinkRewrites, _ state: inout FileSystemState) {
        finishRewrites(of: rewrites.notes.map(\.record.recordID), &state)
        if !rewrites.leftBroken.isEmpty {
            Log.warning("links: \(rewrites.leftBroken.count) links could not be rewritten (for example \(rewrites.leftBroken[0].target))")
        }
    }

    /// After the commit that saved the notes `records` with a new text: their clean open buffers
    /// take the new bytes, and the kernel drops their pages and attributes. A buffer with unsaved
    /// writes is left alone (its save meets the newer record: the conflict copy's rule).
    func finishRewrites(of records: [RecordID], _ state: inout FileSystemState) {
        for id in records {
            guard let metadata = database.metadata(for: id) else { continue }
            let inode = metadata.identity
            refreshCleanBuffer(inode, tag: metadata.recordChangeTag, &state)
            state.pageCache.inodeCaches.remove(inode)
            notifyKernel([.inode(inode)])
        }
    }
}
