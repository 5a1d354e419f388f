import FUSE
import Foundation
import Notes
import RecordStore

/// The regular files of the virtual trees (`.history/…/2026-12-03T08-00-00.md`): read-only opens,
/// reads and releases.
///
/// An open asks the file's tree for its bytes (``VirtualTree/contents(of:_:)``, outside the state
/// lock) and keeps them with the handle (``FileSystemState/virtualFiles``) until release: every
/// read of that handle gives the same bytes, even if the version is pruned meanwhile. A text is
/// held in memory (at most `Note.maxInlineTextBytes` per open handle); an asset is read with
/// `pread` from its file, which the store never rewrites (it is named by its hash). A writable
/// open is refused with `EROFS` before this is reached (``refuseVirtualChange(of:)``), as are
/// truncate and every other change. The kernel keeps no pages across opens (no `keep_cache`):
/// the file's attributes have timeout 0 and its name may come to mean another version's bytes.
extension NotesFileSystem {
    /// `open` of a virtual file, read-only; nil for any other inode.
    /// - Throws: `EROFS` for a writable open, `EISDIR` for a virtual directory, `ENOENT` when the
    ///   file is gone from its directory or its bytes are (mapped from ``VirtualTreeError/noFile``).
    func openVirtualFile(_ inode: Inode, flags: Int32, caller: RequestContext) throws(Errno) -> Opened? {
        guard isVirtualNode(inode) else { return nil }
        if flags & O_ACCMODE != O_RDONLY || flags & O_TRUNC != 0 { throw ErrnoMapping.errno(for: VirtualTreeError.readOnly) }
        let (node, item) = try currentItem(of: inode, caller: caller)
        guard case .file(let file)? = item?.kind else { throw node.isDirectory ? .isDirectory : .invalidArgument }
        guard let tree = virtualTree(of: node.parent), let search = searchBox.withLock({ $0 }) else { throw .noEntry }
        let source: VirtualFileSource
        do {
            let context = virtualContext(search, generation: state.withLock { virtualCacheKey($0) })
            switch try virtualTrees[tree].contents(of: file, context) {
            case .bytes(let bytes): source = .bytes(bytes)
            case .asset(let asset): source = .asset(path: database.assetPath(asset), size: asset.size)
            }
        } catch {
            Log.error("\(virtualTrees[tree].name): \(file.name): \(error)")
            throw ErrnoMapping.errno(for: error)
        }
        return try locked { state in
            let handle = state.newHandle()
            state.virtualFiles[handle] = source
            var opened = Opened(handle: handle)
            opened.noFlush = true  // nothing to save at close
            return opened
        }
    }

    /// The number of the tree virtual directory `directory` belongs to.
    private func virtualTree(of directory: Inode) -> Int? {
        state.withLock { state in
            guard case .directory(let tree, _)? = state.virtualNodes.nodes[directory]?.kind else { return nil }
            return tree
        }
    }

    /// `read` of an open virtual file; nil for any other handle.
    /// - Throws: the asset file's `open`/`pread` errno.
    func readVirtualFile(_ inode: Inode, handle: UInt64, offset: Int64, size: Int) throws(Errno) -> [UInt8]? {
        guard VirtualNodeTable.isVirtual(inode), let source = state.withLock({ $0.virtualFiles[handle] }) else { return nil }
        switch source {
        case .bytes(let bytes): return Self.slice(bytes, offset: offset, size: size)
        case .asset(let path, let count): return try Self.readFile(path, count: count, offset: offset, size: size)
        }
    }

    /// `release` of an open virtual file (false for any other handle).
    func releaseVirtualFile(_ inode: Inode, handle: UInt64) -> Bool {
        guard VirtualNodeTable.isVirtual(inode) else { return false }
        return state.withLock { $0.virtualFiles.removeValue(forKey: handle) != nil }
    }
}

/// Where an open virtual file's reads find its bytes (``FileSystemState/virtualFiles``).
enum VirtualFileSource: Sendable {
    case bytes([UInt8])
    case asset(path: String, size: Int64)
}
