import FUSE
import Foundation
import Notes
import RecordStore

/// The three POSIX times of a record, as `stat` shows them.
///
/// - mtime is the record's `modificationDate` (exact nanoseconds in
///   ``MountFields/modificationNanoseconds`` when set by `utimensat`);
/// - ctime is ``MountFields/changeNanoseconds``, set to now by every save this mount makes
///   (content, chmod, chown, utimensat, rename); records saved elsewhere without it show their mtime;
/// - atime is ``MountFields/accessNanoseconds`` (set by `utimensat`), or the relatime-style update
///   a read makes: kept in memory (``FileSystemState/inodeCaches``) and written into the record at
///   its next save by this mount (so it is lost at unmount when nothing else changed: reads never
///   cost a save); absent, it is the mtime. With `-o noatime` reads never move it.
/// - A directory's mtime and ctime move when an entry of any type is added, removed or renamed in
///   it: its folder record is saved in the same modify as the entry's change (``touchedFolders(_:_:)``).
/// - A file's ctime moves when it is renamed and when one of its names (hard links) comes or goes;
///   then the kernel's cached attributes of it are dropped too, so that every other name shows the
///   new ctime and link count at once (``promoteLink(of:touching:_:)``, ``linkTarget(of:_:)``).
struct FileTimes {
    var access: FileTime
    var modification: FileTime
    var change: FileTime
}

extension NotesFileSystem {
    /// The times of a stored record, with a read's in-memory atime.
    func times(_ inode: Inode, _ metadata: RecordMetadata, _ state: borrowing FileSystemState) -> FileTimes {
        let modification = Self.fileTime(metadata)
        let change = metadata.field(MountFields.changeNanoseconds)?.int64Value.map(Self.fileTime(nanoseconds:)) ?? modification
        let access =
            state.pageCache.inodeCaches[accessTime: inode] ?? metadata.field(MountFields.accessNanoseconds)?.int64Value.map(
                Self.fileTime(nanoseconds:))
            ?? modification
        return FileTimes(access: access, modification: modification, change: change)
    }

    static func fileTime(nanoseconds: Int64) -> FileTime {
        let seconds = nanoseconds / 1_000_000_000
        var rest = nanoseconds % 1_000_000_000
        if rest < 0 { rest += 1_000_000_000 }
        return FileTime(seconds: nanoseconds < 0 && rest != 0 ? seconds - 1 : seconds, nanoseconds: rest)
    }

    /// `time` in nanoseconds since 1970; nil beyond what an Int64 holds (year 2262).
    static func nanoseconds(_ time: FileTime) -> Int64? {
        let (scaled, overflow) = time.seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let (total, overflow2) = scaled.addingReportingOverflow(time.nanoseconds)
        return overflow || overflow2 ? nil : total
    }

    /// Stamps a save of `inode`'s record: ctime now, and the atime a read left in memory.
    static func stampChange(_ record: inout Record, inode: Inode, _ state: inout FileSystemState) {
        record[MountFields.changeNanoseconds] = nanoseconds(.now).map { .int64($0) }
        if let access = state.pageCache.inodeCaches.removeAccessTime(inode) {
            record[MountFields.accessNanoseconds] = nanoseconds(access).map { .int64($0) }
        }
    }

    /// A read of `inode` (a read, a read-only open, a folder's listing): relatime's rule (atime
    /// moves when it is not after mtime or ctime, or is a day old), every time with
    /// `-o strictatime`, never with `-o noatime`; in memory until the record's next save.
    /// - Returns: whether the atime moved.
    @discardableResult
    func noteRead(_ inode: Inode, _ metadata: RecordMetadata, _ state: inout FileSystemState) -> Bool {
        guard readMovesAccessTime(inode, metadata, state) else { return false }
        state.pageCache.inodeCaches[accessTime: inode] = .now
        return true
    }

    /// Whether a read of `inode` now would move its atime (``noteRead(_:_:_:)``'s rule).
    func readMovesAccessTime(_ inode: Inode, _ metadata: RecordMetadata, _ state: borrowing FileSystemState) -> Bool {
        guard !options.noAccessTime, !inodeFlags(inode, state).contains(.noAccessTime) else { return false }
        let times = times(inode, metadata, state)
        return options.strictAccessTime || !(times.modification < times.access) || !(times.change < times.access)
            || times.access.seconds + 86_400 < FileTime.now.seconds
    }

    /// The folder records of `parents` with mtime and ctime now, to save in the same modify as an
    /// entry added to, removed from or renamed in them (the root and `Recovered` have no record).
    func touchedFolders(_ parents: [Inode], _ state: inout FileSystemState) throws -> [Record] {
        var records: [Record] = []
        var seen = Set<Inode>()
        for parent in parents where seen.insert(parent).inserted {
            guard parent != Self.rootInode, parent != Self.recoveredInode, let metadata = database.metadata(identity: parent),
                metadata.recordType == Folder.recordType
            else { continue }
            var record = metadata.record
            let now = FileTime.now
            Self.setModificationTime(now, of: &record)
            Self.stampChange(&record, inode: parent, &state)
            records.append(record)
        }
        return records
    }

    /// A directory's link count: 2 + its subdirectories.
    func directoryLinkCount(_ inode: Inode, _ metadata: RecordMetadata?, _ state: borrowing FileSystemState) -> UInt32 {
        if let listing = state.names.listings[inode] {
            return UInt32(clamping: 2 + listing.directoryCount)
        }
        guard let metadata else { return 2 }
        let folders = database.referrers(to: metadata.recordID, key: FieldName.parent).count { $0.recordType == Folder.recordType }
        return UInt32(clamping: 2 + folders)
    }
}
