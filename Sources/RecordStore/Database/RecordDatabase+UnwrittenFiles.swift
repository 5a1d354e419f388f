import Foundation

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// A record file a full disk kept from being written: its record is read from the journal line
/// that holds it (by the journal's inode, so that a line of a replaced journal is never taken).
struct UnwrittenRecordFile {
    var journalInode: UInt64
    var lineOffset: Int
}

extension RecordStoreError {
    /// Whether this is a write that failed for want of space (`ENOSPC`, `EDQUOT`).
    var isOutOfSpace: Bool {
        if case .io(_, _, let code) = self { return code == ENOSPC || code == EDQUOT }
        return false
    }
}

extension RecordDatabase {
    /// ``redo(_:layout:verify:)``, except that a full disk does not fail it: the entry's records
    /// are then noted in `unwritten` (read from the journal until their files are written, see
    /// ``retryUnwrittenRecordFiles(_:)``). A file written or deleted drops its note. Returns
    /// ``redo(_:layout:verify:)``'s names, none when the disk was full.
    ///
    /// - Throws: the errors of ``redo(_:layout:verify:)`` other than a full disk.
    @discardableResult
    static func redo(
        _ entry: JournalEntry, layout: DatabaseLayout, verify: Bool, journalInode: UInt64,
        unwritten: inout [String: UnwrittenRecordFile]
    ) throws(RecordStoreError) -> (written: [String], error: RecordStoreError?) {
        for id in entry.deletes { unwritten[id.recordName] = nil }
        do {
            let written = try redo(entry, layout: layout, verify: verify)
            for record in entry.saves where !record.isPartial { unwritten[record.recordID.recordName] = nil }
            return (written, nil)
        } catch {
            guard error.isOutOfSpace, let offset = entry.lineOffset else { throw error }
            for record in entry.saves where !record.isPartial {
                unwritten[record.recordID.recordName] = UnwrittenRecordFile(journalInode: journalInode, lineOffset: offset)
            }
            return ([], error)
        }
    }

    /// Writes the record files a full disk kept from being written, now that there may be room
    /// (with the commit lock held); those that still fail stay noted.
    func retryUnwrittenRecordFiles(_ state: inout DatabaseState) {
        for (name, unwritten) in state.unwrittenRecordFiles {
            guard unwritten.journalInode == state.journal.inode,
                let entry = try? state.journal.entry(at: unwritten.lineOffset),
                let i = entry.saves.firstIndex(where: { $0.recordID.recordName == name })
            else {
                state.unwrittenRecordFiles[name] = nil  // its journal is gone: its file is all there is
                continue
            }
            do throws(RecordStoreError) {
                try Sys.overwriteFile(layout.recordPath(name), entry.encodedSaves?[i] ?? RecordCoding.encode(entry.saves[i]))
                state.unwrittenRecordFiles[name] = nil
            } catch {
                return  // still no room
            }
        }
    }

    /// Refuses to drop the journal while it holds records whose files are not written.
    ///
    /// - Throws: ``RecordStoreError/io(path:operation:errno:)`` (`ENOSPC`) when some still cannot be.
    func writeUnwrittenRecordFiles(_ state: inout DatabaseState) throws(RecordStoreError) {
        retryUnwrittenRecordFiles(&state)
        guard let name = state.unwrittenRecordFiles.keys.first else { return }
        throw .io(path: layout.recordPath(name), operation: "write (before a checkpoint)", errno: ENOSPC)
    }

    /// The record `id` as the journal line holds it whose file a full disk kept from being
    /// written; nil when its file was written (or its journal replaced since).
    func unwrittenRecord(_ id: RecordID) -> Record? {
        state.withLock { state in
            guard let unwritten = state.unwrittenRecordFiles[id.recordName], unwritten.journalInode == state.journal.inode else {
                return nil
            }
            return (try? state.journal.entry(at: unwritten.lineOffset))?.saves.first { $0.recordID == id }
        }
    }

    // MARK: The space reserve

    /// The size of `<db>/reserve`: what a delete needs (a journal line, a page of a folder's
    /// record file) many times over.
    static let spaceReserve = 256 << 10

    /// Makes `<db>/reserve` (``spaceReserve`` bytes, allocated) if it is missing and there is room:
    /// released by a commit that deletes and finds the disk full (``releaseSpaceReserve()``), so
    /// that a full disk can always be freed by deleting.
    ///
    /// - Returns: false when the reserve is missing and there is no room to make it (`ENOSPC`,
    ///   `EDQUOT`); true when it is there, was made, or cannot be made for another reason (a
    ///   filesystem without `fallocate`: saves are not refused for that).
    @discardableResult
    static func ensureSpaceReserve(_ layout: DatabaseLayout) -> Bool {
        do { if try Sys.fileStatus(layout.spaceReserve) != nil { return true } } catch { return true }
        let temp = RecordFiles.tempPath(layout)
        let fd: Int32
        do { fd = try Sys.open(temp, O_WRONLY | O_CREAT | O_EXCL) } catch { return !error.isOutOfSpace }
        let result = posix_fallocate(fd, 0, off_t(spaceReserve))
        Sys.close(fd)
        if result != 0 || (try? Sys.rename(temp, layout.spaceReserve)) == nil {
            try? Sys.unlink(temp)
            return result != ENOSPC && result != EDQUOT
        }
        return true
    }

    /// Whether the space reserve is in place (made again if missing and there is room; see
    /// ``ensureSpaceReserve(_:)``), looked at no more than once a second while it was there.
    func spaceReserveHeld(_ state: inout DatabaseState) -> Bool {
        let now = ContinuousClock.now
        if let seen = state.spaceReserveSeenAt, now - seen < .seconds(1) { return true }
        guard Self.ensureSpaceReserve(layout) else { return false }
        state.spaceReserveSeenAt = now
        return true
    }

    /// Frees the space reserve; whether there was one.
    func releaseSpaceReserve() -> Bool {
        guard (try? Sys.fileStatus(layout.spaceReserve)) != nil, (try? Sys.unlink(layout.spaceReserve)) != nil else { return false }
        log("the disk is full: the space reserve \(layout.spaceReserve) was released for a delete")
        return true
    }
}
