import FUSE
import Foundation
import Notes

/// The entries of one directory: records and scratch files, with their resolved file names.
///
/// Names follow ``EntryNames``: records whose base names collide get stable suffixes; updating one
/// record re-resolves only its old and new name groups.
struct DirectoryListing {
    struct Member: Equatable {
        /// The record's name (empty for a scratch file).
        var recordName: String { storedRecordName.string }
        private var storedRecordName: CompactName
        var title: String
        var created: Date
        /// How the record type names the entry (``EntryNames/kind(ofRecordType:)``; nil for a
        /// scratch file or a type the mount does not name): one byte where the type's name took 16.
        let kind: EntryNames.Kind?
        /// A scratch file (``DirectoryListing/scratchType``): it keeps its name.
        let isScratch: Bool
        /// A `Folder` record (the virtual `Recovered` is one too).
        var isDirectory: Bool { kind == .folder }
        /// The POSIX type of a non-directory (`S_IFREG` unless a symlink or special file).
        var fileType: mode_t = S_IFREG
        /// For a `Link` record (a hard link): the inode it shows (0 for none, which no entry has).
        private var storedLinkTarget: Inode = 0
        var linkTarget: Inode? {
            get { storedLinkTarget == 0 ? nil : storedLinkTarget }
            set { storedLinkTarget = newValue ?? 0 }
        }

        /// `recordType`: `Folder`, `Note`, `Attachment` and the other shown types, or
        /// ``DirectoryListing/scratchType``.
        init(
            recordName: String, recordType: String, title: String, created: Date, fileType: mode_t = S_IFREG,
            linkTarget: Inode? = nil
        ) {
            self.storedRecordName = CompactName(recordName)
            self.kind = EntryNames.kind(ofRecordType: recordType)
            self.isScratch = recordType == DirectoryListing.scratchType
            self.title = title
            self.created = created
            self.fileType = fileType
            self.linkTarget = linkTarget
        }

        /// Whether this member is the record named `name`.
        func isRecord(named name: String) -> Bool { isRecord(CompactName(name)) }

        /// Whether this member is the record named `name` (parsed once for a scan of many members).
        func isRecord(_ name: CompactName) -> Bool { storedRecordName == name }
    }

    /// A record name as a listing keeps it: the 16 bytes of a `UUID` for the upper-case UUID
    /// strings that new records get (`Record()`), else the string. A listing holds one per entry
    /// (100,000s in a large mount), and such a string would cost a heap allocation of 80 bytes
    /// beside its 16 inline ones.
    enum CompactName: Equatable {
        case uuid(UUID)
        case string(String)

        init(_ name: String) {
            // Only a name that reads back byte for byte is kept as a UUID: `uuidString`'s
            // spelling (upper-case hex, dashes after 8, 12, 16 and 20 digits).
            if let uuid = Self.uuid(spelt: name) {
                self = .uuid(uuid)
            } else {
                self = .string(name)
            }
        }

        var string: String {
            switch self {
            case .uuid(let uuid): Self.spelling(of: uuid)
            case .string(let name): name
            }
        }

        // Parsed and spelt here rather than by `UUID(uuidString:)` and `uuidString`, which use
        // `sscanf` and `snprintf` on Linux: 9% of the daemon's CPU in a first `ls -lR` of
        // 100,000 notes (a listing is built and read once per entry). Same results, as
        // DirectoryListingTests.compactNamesAgreeWithFoundation checks.
        private static let digits = Array("0123456789ABCDEF".utf8)

        /// The UUID `name` spells as `uuidString` does; nil for any other string.
        static func uuid(spelt name: String) -> UUID? {
            var name = name
            return name.withUTF8 { bytes -> UUID? in
                guard bytes.count == 36 else { return nil }
                var value: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
                var high: UInt8? = nil
                var byte = 0
                for (i, c) in bytes.enumerated() {
                    if i == 8 || i == 13 || i == 18 || i == 23 {
                        guard c == UInt8(ascii: "-") else { return nil }
                        continue
                    }
                    let digit: UInt8
                    switch c {
                    case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = c - UInt8(ascii: "0")
                    case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = c - UInt8(ascii: "A") + 10
                    default: return nil
                    }
                    if let h = high {
                        withUnsafeMutableBytes(of: &value) { $0[byte] = h << 4 | digit }
                        byte += 1
                        high = nil
                    } else {
                        high = digit
                    }
                }
                return UUID(uuid: value)
            }
        }

        /// `uuid.uuidString`.
        static func spelling(of uuid: UUID) -> String {
            withUnsafeBytes(of: uuid.uuid) { value in
                String(unsafeUninitializedCapacity: 36) { out in
                    var w = 0
                    for (i, byte) in value.enumerated() {
                        if i == 4 || i == 6 || i == 8 || i == 10 {
                            out[w] = UInt8(ascii: "-")
                            w += 1
                        }
                        out[w] = digits[Int(byte >> 4)]
                        out[w + 1] = digits[Int(byte & 0x0F)]
                        w += 2
                    }
                    return w
                }
            }
        }
    }

    /// The inodes whose entries want one base name: nearly always a single one, which needs no
    /// `Set` (an allocation of about 100 bytes per entry).
    private enum Group {
        case one(Inode)
        case many(Set<Inode>)

        var inodes: [Inode] {
            switch self {
            case .one(let inode): [inode]
            case .many(let set): Array(set)
            }
        }

        /// The group with `inode` added.
        func inserting(_ inode: Inode) -> Group {
            switch self {
            case .one(let other): return other == inode ? self : .many([other, inode])
            case .many(var set):
                set.insert(inode)
                return .many(set)
            }
        }

        /// The group without `inode`; nil when it was the last one.
        func removing(_ inode: Inode) -> Group? {
            switch self {
            case .one(let other): return other == inode ? nil : self
            case .many(var set):
                set.remove(inode)
                if set.count == 1, let last = set.first { return .one(last) }
                return set.isEmpty ? nil : .many(set)
            }
        }
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
    private var groups: [String: Group] = [:]
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
        guard let kind = member.kind else { return member.title }
        return EntryNames.baseName(member.title, kind: kind)
    }

    /// An empty listing.
    init() {}

    /// A listing of `entries`, built at once (a directory's first listing): the members of each
    /// name are grouped first and named once, where an ``upsert(_:_:)`` for each would name a
    /// growing group again at every member and report renames nobody reads. A later entry for
    /// the same inode replaces an earlier one, as with upserts.
    init(_ entries: [(Inode, Member)]) {
        members.reserveCapacity(entries.count)
        for (inode, member) in entries { place(inode, member) }
        resolve(Set(groups.keys))
    }

    /// Inserts or updates a member; returns every entry whose name changed.
    @discardableResult
    mutating func upsert(_ inode: Inode, _ member: Member) -> [Rename] {
        if members[inode] == member { return [] }
        let (oldBase, base) = place(inode, member)
        return resolve(Set([base] + (oldBase.map { [$0] } ?? [])))
    }

    /// Puts `member` at `inode` (replacing what was there) in the members, the directory count
    /// and the name groups, without naming anyone; returns the base names of the old member (if
    /// any) and the new one, the groups to name again.
    @discardableResult
    private mutating func place(_ inode: Inode, _ member: Member) -> (old: String?, new: String) {
        var oldBase: String?
        if let old = members[inode] {
            if old.isDirectory { directoryCount -= 1 }
            let base = Self.base(old)
            groups[base] = groups[base]?.removing(inode)
            oldBase = base
        }
        members[inode] = member
        if member.isDirectory { directoryCount += 1 }
        let base = Self.base(member)
        groups[base] = groups[base]?.inserting(inode) ?? .one(inode)
        return (oldBase, base)
    }

    /// Removes a member; returns every entry whose name changed (the removed one with `new` nil).
    @discardableResult
    mutating func remove(_ inode: Inode) -> [Rename] {
        guard let old = members.removeValue(forKey: inode) else { return [] }
        if old.isDirectory { directoryCount -= 1 }
        let base = Self.base(old)
        groups[base] = groups[base]?.removing(inode)
        var renames: [Rename] = []
        if let name = nameOf.removeValue(forKey: inode) {
            if names[name] == inode { names[name] = nil }
            renames.append(Rename(inode: inode, old: name, new: nil))
        }
        return renames + resolve([base])
    }

    @discardableResult
    private mutating func resolve(_ bases: Set<String>) -> [Rename] {
        var renames: [Rename] = []
        var assigned: [(Inode, String)] = []
        for base in bases {
            // The shared rule (EntryNames.assign) over the records that want this name; a scratch
            // file keeps its name (creating one over an existing name is refused).
            let inodes = groups[base]?.inodes ?? []
            // (Every inode of a group is a member: upsert and remove keep the two in step.)
            let grouped = inodes.compactMap { inode in members[inode].map { (inode, $0) } }
            let records = grouped.filter { !$0.1.isScratch }
            for (inode, member) in grouped where member.isScratch { assigned.append((inode, base)) }
            if records.count == 1, records[0].1.kind != nil {
                assigned.append((records[0].0, base))  // what EntryNames.assign gives a record alone
                continue
            }
            let candidates = records.map { _, member in
                EntryNames.Candidate(
                    recordName: member.recordName, kind: member.kind ?? .attachment,
                    name: member.title, creationDate: member.created)
            }
            // An entry that keeps its base name shares the group key's storage (one string, not two).
            for ((inode, _), name) in zip(records, EntryNames.assign(candidates)) { assigned.append((inode, name == base ? base : name)) }
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
