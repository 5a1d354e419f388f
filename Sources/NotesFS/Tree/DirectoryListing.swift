import FUSE
import Foundation
import Notes

/// The entries of one directory: records and scratch files, with their resolved file names.
///
/// Names follow ``EntryNames``: records whose base names collide get stable suffixes; updating one
/// record re-resolves only its old and new name groups.
struct DirectoryListing {
    struct Member: Equatable {
        var recordName: String
        /// `Folder`, `Note`, `Attachment`, or ``DirectoryListing/scratchType``.
        var recordType: String
        var title: String
        var created: Date
        var isDirectory: Bool
        /// The POSIX type of a non-directory (`S_IFREG` unless a symlink or special file).
        var fileType: mode_t = S_IFREG
        /// For a `Link` record (a hard link): the inode it shows.
        var linkTarget: Inode? = nil
    }

    /// The inode the kernel sees behind `name`: a hard link's target, else the entry itself.
    func inode(named name: String) -> Inode? {
        names[name].map { members[$0]?.linkTarget ?? $0 }
    }

    /// The POSIX type of entry `inode` (as listed).
    func fileType(of inode: Inode) -> mode_t {
        guard let member = members[inode] else { return S_IFREG }
        return member.isDirectory ? S_IFDIR : member.fileType
    }

    static let scratchType = "scratch"

    private(set) var names: [String: Inode] = [:]
    private(set) var nameOf: [Inode: String] = [:]
    private(set) var members: [Inode: Member] = [:]
    private var groups: [String: Set<Inode>] = [:]
    /// How many members are directories (a directory's link count is 2 + this), kept by
    /// ``upsert(_:_:)`` and ``remove(_:)`` so that a `getattr` does not count 5,000 entries.
    private(set) var directoryCount = 0

    /// A name change caused by an update: `old` nil for a new entry, `new` nil for a removed one.
    struct Rename: Equatable {
        var inode: Inode
        var old: String?
        var new: String?
    }

    private static func base(_ member: Member) -> String {
        guard let kind = EntryNames.kind(ofRecordType: member.recordType) else { return member.title }
        return EntryNames.baseName(member.title, kind: kind)
    }

    /// Inserts or updates a member; returns every entry whose name changed.
    @discardableResult
    mutating func upsert(_ inode: Inode, _ member: Member) -> [Rename] {
        if members[inode] == member { return [] }
        var touched: Set<String> = [Self.base(member)]
        if let old = members[inode] {
            if old.isDirectory { directoryCount -= 1 }
            let oldBase = Self.base(old)
            touched.insert(oldBase)
            groups[oldBase]?.remove(inode)
            if groups[oldBase]?.isEmpty == true { groups[oldBase] = nil }
        }
        members[inode] = member
        if member.isDirectory { directoryCount += 1 }
        groups[Self.base(member), default: []].insert(inode)
        return resolve(touched)
    }

    /// Removes a member; returns every entry whose name changed (the removed one with `new` nil).
    @discardableResult
    mutating func remove(_ inode: Inode) -> [Rename] {
        guard let old = members.removeValue(forKey: inode) else { return [] }
        if old.isDirectory { directoryCount -= 1 }
        let base = Self.base(old)
        groups[base]?.remove(inode)
        if groups[base]?.isEmpty == true { groups[base] = nil }
        var renames: [Rename] = []
        if let name = nameOf.removeValue(forKey: inode) {
            if names[name] == inode { names[name] = nil }
            renames.append(Rename(inode: inode, old: name, new: nil))
        }
        return renames + resolve([base])
    }

    private mutating func resolve(_ bases: Set<String>) -> [Rename] {
        var renames: [Rename] = []
        var assigned: [(Inode, String)] = []
        for base in bases {
            // The shared rule (EntryNames.assign) over the records that want this name; a scratch
            // file keeps its name (creating one over an existing name is refused).
            let inodes = Array(groups[base] ?? [])
            // (Every inode of a group is a member: upsert and remove keep the two in step.)
            let grouped = inodes.compactMap { inode in members[inode].map { (inode, $0) } }
            let records = grouped.filter { $0.1.recordType != Self.scratchType }
            for (inode, member) in grouped where member.recordType == Self.scratchType { assigned.append((inode, base)) }
            let candidates = records.map { _, member in
                EntryNames.Candidate(
                    recordName: member.recordName, kind: EntryNames.kind(ofRecordType: member.recordType) ?? .attachment,
                    name: member.title, creationDate: member.created)
            }
            for ((inode, _), name) in zip(records, EntryNames.assign(candidates)) { assigned.append((inode, name)) }
        }
        // Clear old names first so that swaps within a group resolve cleanly.
        for (inode, name) in assigned where nameOf[inode] != name {
            if let old = nameOf[inode], names[old] == inode { names[old] = nil }
        }
        for (inode, name) in assigned where nameOf[inode] != name {
            renames.append(Rename(inode: inode, old: nameOf[inode], new: name))
            nameOf[inode] = name
            names[name] = inode
        }
        return renames
    }
}
