/// `fallocate(2)` and `posix_fallocate(3)` (used by `rsync --preallocate`, databases and download
/// managers).

import FUSE

extension NotesFileSystem {
    /// Mode 0 grows the file to `offset + length` if it is shorter (sparse: the new bytes are
    /// zeros and cost no memory); `FALLOC_FL_KEEP_SIZE` changes nothing that can be seen. No space is
    /// reserved: content is saved as a record or an asset at close or fsync, and a full disk is
    /// reported there (`ENOSPC`), as for any write. Punching holes and collapsing, inserting or
    /// zeroing ranges are refused with `EOPNOTSUPP`.
    /// - Throws: `EINVAL` for a negative offset or a length of 0 or less, `EFBIG` past
    ///   ``ContentBuffer/maximumSize``, `EBADF` for a handle that is not open on `inode`.
    public func fallocate(
        _ context: RequestContext, inode: Inode, handle: UInt64, mode: AllocateMode, offset: Int64, length: Int64
    ) throws(Errno) {
        guard mode.subtracting(.keepSize).isEmpty else { throw .notSupported }
        guard offset >= 0, length > 0 else { throw .invalidArgument }
        guard offset <= ContentBuffer.maximumSize - length else { throw .fileTooLarge }
        guard !mode.contains(.keepSize) else { return }
        let open: OpenFile = try locked { (state) throws in
            guard state.files.handles[handle] == inode, let open = state.files.open[inode] else { throw Errno.badFileDescriptor }
            try refuse(inode, ifFlagged: .immutable, state)
            return open
        }
        // As a write: the buffer is grown outside the state lock; changes to one file are serialised.
        open.operationLock.lock()
        defer { open.operationLock.unlock() }
        let end = offset + length
        let content: ContentBuffer? = try locked { (state) throws in
            guard state.files.handles[handle] == inode, state.files.open[inode] === open else { throw Errno.badFileDescriptor }
            guard open.content.count < end else { return nil }
            open.markChanged()
            if let file = state.scratchFiles.files[inode] { file.modificationTime = .now }
            return open.content
        }
        try content?.truncate(end)
    }
}
