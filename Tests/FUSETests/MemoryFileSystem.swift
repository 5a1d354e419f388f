/// `MemoryFileSystem`: a small in-memory `FileSystem` for the mount tests, with lookup counting.

import FUSE
import Foundation
import Glibc
import Synchronization

/// An in-memory tree of directories, files and symlinks. Lookup counts follow the `FileSystem`
/// contract, so tests can check them. Test hooks: names starting with `errno-N` fail lookup with
/// errno N; the name `hang` blocks lookup until `releaseHang()`.
final class MemoryFileSystem: FileSystem {
    struct Node {
        var attributes: Attributes
        var data: [UInt8] = []
        var target: [UInt8] = []
        var children: [FileName: Inode] = [:]
        var xattrs: [FileName: [UInt8]] = [:]
        var lookups: UInt64 = 0
    }

    struct State {
        var nodes: [Inode: Node] = [:]
        var nextInode: Inode = 2
        var nextHandle: UInt64 = 1
        var directorySnapshots: [UInt64: [(FileName, Inode)]] = [:]
        var destroyed = false
        var initialized = false
        var readdirplusPacked = 0
        var lookupRequests = 0
        /// Lookups of names starting with "hang" that have started waiting.
        var hangsStarted = 0
    }

    let state = Mutex(State())
    let timeout: Double
    private let hang = DispatchSemaphore(value: 0)

    init(timeout: Double = 60) {
        self.timeout = timeout
        let now = FileTime.now
        let root = Attributes(
            inode: Attributes.rootInode, mode: S_IFDIR | 0o755, linkCount: 2, uid: getuid(), gid: getgid(),
            accessTime: now, modificationTime: now, changeTime: now)
        state.withLock { $0.nodes[Attributes.rootInode] = Node(attributes: root) }
    }

    var implementsReaddirplus: Bool { true }

    // MARK: Test inspection

    var destroyed: Bool { state.withLock { $0.destroyed } }
    var initialized: Bool { state.withLock { $0.initialized } }
    var lookupRequests: Int { state.withLock { $0.lookupRequests } }
    var hangsStarted: Int { state.withLock { $0.hangsStarted } }
    var readdirplusPacked: Int { state.withLock { $0.readdirplusPacked } }

    func inode(named name: FileName, in parent: Inode = Attributes.rootInode) -> Inode? {
        state.withLock { $0.nodes[parent]?.children[name] }
    }

    func lookupCount(_ inode: Inode) -> UInt64 { state.withLock { $0.nodes[inode]?.lookups ?? 0 } }

    /// Replaces a file's bytes behind the kernel's back (no attribute change).
    func replaceContent(_ inode: Inode, with bytes: [UInt8]) {
        state.withLock { $0.nodes[inode]?.data = bytes }
    }

    func releaseHang() { hang.signal() }

    // MARK: FileSystem

    func initialize(connection: inout ConnectionInfo, notifier: Notifier) {
        state.withLock { $0.initialized = true }
    }

    func destroy() { state.withLock { $0.destroyed = true } }

    func lookup(_ context: RequestContext, parent: Inode, name: FileName) throws(Errno) -> Entry {
        if let text = name.string, text.hasPrefix("errno-"), let code = Int32(text.dropFirst(6)) {
            throw Errno(rawValue: code)
        }
        if name.string?.hasPrefix("hang") == true {
            state.withLock { $0.hangsStarted += 1 }
            _ = hang.wait(timeout: .now() + 30)
        }
        return try state.withLock { (state) throws(Errno) -> Entry in
            state.lookupRequests += 1
            guard let directory = state.nodes[parent] else { throw .stale }
            guard let inode = directory.children[name] else { throw .noEntry }
            return entry(&state, inode)
        }
    }

    func forget(_ inode: Inode, lookups: UInt64) {
        state.withLock { state in
            guard var node = state.nodes[inode] else { return }
            node.lookups -= min(lookups, node.lookups)
            state.nodes[inode] = node
            if node.lookups == 0 && node.attributes.linkCount == 0 { state.nodes[inode] = nil }
        }
    }

    func getattr(_ context: RequestContext, inode: Inode, handle: UInt64?) throws(Errno) -> AttributesReply {
        try state.withLock { (state) throws(Errno) -> AttributesReply in
            guard let node = state.nodes[inode] else { throw .stale }
            return AttributesReply(node.attributes, timeout: timeout)
        }
    }

    func setattr(_ context: RequestContext, inode: Inode, changes: SetAttributes) throws(Errno) -> AttributesReply {
        try state.withLock { (state) throws(Errno) -> AttributesReply in
            guard var node = state.nodes[inode] else { throw .stale }
            let now = FileTime.now
            if let mode = changes.mode { node.attributes.mode = node.attributes.mode & S_IFMT | mode & 0o7777 }
            if let uid = changes.uid { node.attributes.uid = uid }
            if let gid = changes.gid { node.attributes.gid = gid }
            if let size = changes.size {
                node.data = Array(node.data.prefix(Int(size)))
                node.data += [UInt8](repeating: 0, count: Int(size) - node.data.count)
                node.attributes.size = size
                node.attributes.modificationTime = now
            }
            if let time = changes.accessTime { node.attributes.accessTime = time.resolved(now: now) }
            if let time = changes.modificationTime { node.attributes.modificationTime = time.resolved(now: now) }
            node.attributes.changeTime = changes.changeTime ?? now
            state.nodes[inode] = node
            return AttributesReply(node.attributes, timeout: timeout)
        }
    }

    func readlink(_ context: RequestContext, inode: Inode) throws(Errno) -> [UInt8] {
        try state.withLock { (state) throws(Errno) -> [UInt8] in
            guard let node = state.nodes[inode] else { throw .stale }
            guard node.attributes.mode & S_IFMT == S_IFLNK else { throw .invalidArgument }
            return node.target
        }
    }

    func mkdir(_ context: RequestContext, parent: Inode, name: FileName, mode: mode_t) throws(Errno) -> Entry {
        try add(context, parent: parent, name: name, mode: S_IFDIR | (mode & 0o7777))
    }

    func mknod(_ context: RequestContext, parent: Inode, name: FileName, mode: mode_t, rdev: UInt64) throws(Errno) -> Entry {
        try add(context, parent: parent, name: name, mode: mode)
    }

    func create(_ context: RequestContext, parent: Inode, name: FileName, mode: mode_t, flags: Int32) throws(Errno) -> (Entry, Opened) {
        let entry = try add(context, parent: parent, name: name, mode: S_IFREG | (mode & 0o7777))
        let handle = state.withLock { state in
            defer { state.nextHandle += 1 }
            return state.nextHandle
        }
        return (entry, Opened(handle: handle, keepCache: true))
    }

    func symlink(_ context: RequestContext, target: [UInt8], parent: Inode, name: FileName) throws(Errno) -> Entry {
        let entry = try add(context, parent: parent, name: name, mode: S_IFLNK | 0o777, target: target)
        return entry
    }

    func link(_ context: RequestContext, inode: Inode, newParent: Inode, newName: FileName) throws(Errno) -> Entry {
        try state.withLock { (state) throws(Errno) -> Entry in
            guard state.nodes[inode] != nil, let directory = state.nodes[newParent] else { throw .stale }
            guard directory.children[newName] == nil else { throw .exists }
            state.nodes[newParent]!.children[newName] = inode
            state.nodes[inode]!.attributes.linkCount += 1
            return entry(&state, inode)
        }
    }

    func unlink(_ context: RequestContext, parent: Inode, name: FileName) throws(Errno) {
        try state.withLock { (state) throws(Errno) in
            guard let inode = state.nodes[parent]?.children[name] else { throw .noEntry }
            guard state.nodes[inode]?.attributes.isDirectory == false else { throw .isDirectory }
            state.nodes[parent]!.children[name] = nil
            state.nodes[inode]!.attributes.linkCount -= 1
            if state.nodes[inode]!.attributes.linkCount == 0 && state.nodes[inode]!.lookups == 0 {
                state.nodes[inode] = nil
            }
        }
    }

    func rmdir(_ context: RequestContext, parent: Inode, name: FileName) throws(Errno) {
        try state.withLock { (state) throws(Errno) in
            guard let inode = state.nodes[parent]?.children[name], let node = state.nodes[inode] else { throw .noEntry }
            guard node.attributes.isDirectory else { throw .notDirectory }
            guard node.children.isEmpty else { throw .notEmpty }
            state.nodes[parent]!.children[name] = nil
            state.nodes[parent]!.attributes.linkCount -= 1
            state.nodes[inode]!.attributes.linkCount = 0
            if node.lookups == 0 { state.nodes[inode] = nil }
        }
    }

    func rename(
        _ context: RequestContext, parent: Inode, name: FileName, newParent: Inode, newName: FileName,
        flags: RenameFlags
    ) throws(Errno) {
        try state.withLock { (state) throws(Errno) in
            guard let inode = state.nodes[parent]?.children[name] else { throw .noEntry }
            guard state.nodes[newParent] != nil else { throw .stale }
            let existing = state.nodes[newParent]!.children[newName]
            if flags.contains(.exchange) {
                guard let existing else { throw .noEntry }
                state.nodes[parent]!.children[name] = existing
                state.nodes[newParent]!.children[newName] = inode
                return
            }
            if flags.contains(.noReplace), existing != nil { throw .exists }
            if let existing, existing != inode {
                if state.nodes[existing]!.attributes.isDirectory {
                    guard state.nodes[existing]!.children.isEmpty else { throw .notEmpty }
                }
                state.nodes[existing]!.attributes.linkCount -= 1
            }
            state.nodes[parent]!.children[name] = nil
            state.nodes[newParent]!.children[newName] = inode
        }
    }

    func open(_ context: RequestContext, inode: Inode, flags: Int32) throws(Errno) -> Opened {
        try state.withLock { (state) throws(Errno) -> Opened in
            guard state.nodes[inode] != nil else { throw .stale }
            defer { state.nextHandle += 1 }
            return Opened(handle: state.nextHandle, keepCache: true)
        }
    }

    func read(_ context: RequestContext, inode: Inode, handle: UInt64, offset: Int64, size: Int) throws(Errno) -> [UInt8] {
        try state.withLock { (state) throws(Errno) -> [UInt8] in
            guard let node = state.nodes[inode] else { throw .stale }
            guard offset < node.data.count else { return [] }
            return Array(node.data[Int(offset)..<min(node.data.count, Int(offset) + size)])
        }
    }

    func write(_ context: RequestContext, inode: Inode, handle: UInt64, offset: Int64, data: UnsafeRawBufferPointer, flags: Int32)
        throws(Errno) -> Int
    {
        try state.withLock { (state) throws(Errno) -> Int in
            guard var node = state.nodes[inode] else { throw .stale }
            let end = Int(offset) + data.count
            if node.data.count < end { node.data += [UInt8](repeating: 0, count: end - node.data.count) }
            node.data.replaceSubrange(Int(offset)..<end, with: data)
            node.attributes.size = UInt64(node.data.count)
            node.attributes.modificationTime = .now
            state.nodes[inode] = node
            return data.count
        }
    }

    func opendir(_ context: RequestContext, inode: Inode, flags: Int32) throws(Errno) -> Opened {
        try state.withLock { (state) throws(Errno) -> Opened in
            guard let node = state.nodes[inode] else { throw .stale }
            guard node.attributes.isDirectory else { throw .notDirectory }
            let handle = state.nextHandle
            state.nextHandle += 1
            let listing = node.children.sorted { $0.key.bytes.lexicographicallyPrecedes($1.key.bytes) }
            state.directorySnapshots[handle] = [(".", inode), ("..", inode)] + listing.map { ($0.key, $0.value) }
            return Opened(handle: handle)
        }
    }

    func readdir(_ context: RequestContext, inode: Inode, handle: UInt64, offset: Int64, into buffer: DirectoryBuffer) throws(Errno) {
        let listing = state.withLock { $0.directorySnapshots[handle] ?? [] }
        for index in Int(offset)..<max(Int(offset), listing.count) {
            let (name, child) = listing[index]
            let mode = state.withLock { $0.nodes[child]?.attributes.mode } ?? S_IFREG
            if !buffer.add(name, inode: child, mode: mode, nextOffset: Int64(index + 1)) { break }
        }
    }

    func readdirplus(_ context: RequestContext, inode: Inode, handle: UInt64, offset: Int64, into buffer: DirectoryPlusBuffer) throws(Errno)
    {
        let listing = state.withLock { $0.directorySnapshots[handle] ?? [] }
        for index in Int(offset)..<max(Int(offset), listing.count) {
            let (name, child) = listing[index]
            let packed = state.withLock { state -> Bool? in
                guard let node = state.nodes[child] else { return nil }
                let entry = Entry(node.attributes, attributeTimeout: timeout, entryTimeout: timeout)
                guard buffer.add(name, entry: entry, nextOffset: Int64(index + 1)) else { return false }
                if DirectoryPlusBuffer.addsLookupReference(for: name) {
                    state.nodes[child]!.lookups += 1
                    state.readdirplusPacked += 1
                }
                return true
            }
            if packed == false { break }
        }
    }

    func releasedir(_ context: RequestContext, inode: Inode, handle: UInt64) throws(Errno) {
        state.withLock { _ = $0.directorySnapshots.removeValue(forKey: handle) }
    }

    func statfs(_ context: RequestContext, inode: Inode) throws(Errno) -> FilesystemStatistics {
        let count = state.withLock { UInt64($0.nodes.count) }
        return FilesystemStatistics(blocks: 1000, freeBlocks: 600, files: count + 100, freeFiles: 100)
    }

    func setxattr(_ context: RequestContext, inode: Inode, name: FileName, value: [UInt8], flags: XattrFlags) throws(Errno) {
        try state.withLock { (state) throws(Errno) in
            guard let node = state.nodes[inode] else { throw .stale }
            if flags.contains(.create), node.xattrs[name] != nil { throw .exists }
            if flags.contains(.replace), node.xattrs[name] == nil { throw .noAttribute }
            state.nodes[inode]!.xattrs[name] = value
        }
    }

    func getxattr(_ context: RequestContext, inode: Inode, name: FileName) throws(Errno) -> [UInt8] {
        try state.withLock { (state) throws(Errno) -> [UInt8] in
            guard let node = state.nodes[inode] else { throw .stale }
            guard let value = node.xattrs[name] else { throw .noAttribute }
            return value
        }
    }

    func listxattr(_ context: RequestContext, inode: Inode) throws(Errno) -> [FileName] {
        try state.withLock { (state) throws(Errno) -> [FileName] in
            guard let node = state.nodes[inode] else { throw .stale }
            return node.xattrs.keys.sorted { $0.bytes.lexicographicallyPrecedes($1.bytes) }
        }
    }

    func removexattr(_ context: RequestContext, inode: Inode, name: FileName) throws(Errno) {
        try state.withLock { (state) throws(Errno) in
            guard state.nodes[inode] != nil else { throw .stale }
            guard state.nodes[inode]!.xattrs.removeValue(forKey: name) != nil else { throw .noAttribute }
        }
    }

    // MARK: Helpers

    /// Counts a lookup reference and builds the entry (caller holds the lock).
    private func entry(_ state: inout State, _ inode: Inode) -> Entry {
        state.nodes[inode]!.lookups += 1
        return Entry(state.nodes[inode]!.attributes, attributeTimeout: timeout, entryTimeout: timeout)
    }

    private func add(
        _ context: RequestContext, parent: Inode, name: FileName, mode: mode_t, target: [UInt8] = []
    ) throws(Errno) -> Entry {
        guard name.string != nil else { throw .invalidArgument }
        return try state.withLock { (state) throws(Errno) -> Entry in
            guard let directory = state.nodes[parent] else { throw .stale }
            guard directory.children[name] == nil else { throw .exists }
            let inode = state.nextInode
            state.nextInode += 1
            let now = FileTime.now
            let isDirectory = mode & S_IFMT == S_IFDIR
            let attributes = Attributes(
                inode: inode, mode: mode, linkCount: isDirectory ? 2 : 1, uid: context.uid, gid: context.gid,
                size: UInt64(target.count), accessTime: now, modificationTime: now, changeTime: now)
            state.nodes[inode] = Node(attributes: attributes, target: target)
            state.nodes[parent]!.children[name] = inode
            if isDirectory { state.nodes[parent]!.attributes.linkCount += 1 }
            return entry(&state, inode)
        }
    }
}
