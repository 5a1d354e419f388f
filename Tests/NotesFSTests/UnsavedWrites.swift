import FUSE
import Foundation
import TestSupport
import Testing

@testable import NotesFS

/// A note at the root open with unsaved writes, made by the filesystem's own open and write (a
/// descriptor of this process would be flushed by every program a test forks, which closes its
/// copy at exec, and the buffer would be saved too early).
struct UnsavedWrites {
    let fileSystem: NotesFileSystem
    let context = RequestContext(uid: getuid(), gid: getgid())
    let inode: Inode
    let handle: UInt64

    /// Opens `name` at the root of `m` and writes `text` at offset 0, unsaved.
    init(_ m: NotesMount, _ name: String, writing text: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        fileSystem = m.fileSystem
        inode = try fileSystem.lookup(context, parent: NotesFileSystem.rootInode, name: FileName(name)).inode
        handle = try fileSystem.open(context, inode: inode, flags: O_RDWR).handle
        let written = try Array(text.utf8).withUnsafeBytes { [self] bytes in
            try fileSystem.write(context, inode: inode, handle: handle, offset: 0, data: bytes, flags: O_RDWR)
        }
        #expect(written == text.utf8.count, sourceLocation: sourceLocation)
    }

    /// Saves them, which must meet a newer record (`ESTALE`), and closes the file.
    func saveMeetingANewerRecord(sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(throws: Errno.stale, sourceLocation: sourceLocation) { try fileSystem.flush(context, inode: inode, handle: handle) }
        try fileSystem.release(context, inode: inode, handle: handle, flags: O_RDWR)
    }
}
