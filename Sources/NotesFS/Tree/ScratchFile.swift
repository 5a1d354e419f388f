import FUSE
import Glibc
import Notes

/// An editor scratch file: lives in memory while mounted, never saved (see ``ScratchNames``).
// @unchecked Sendable: instances live in `FileSystemState` and are only read or changed while
// holding `NotesFileSystem.state`'s lock.
final class ScratchFile: @unchecked Sendable {
    let inode: Inode
    var parent: Inode
    var name: String
    var content: ContentBuffer
    var mode: mode_t
    var uid: uid_t
    var gid: gid_t
    var modificationTime: FileTime
    /// A note hidden by a rename to this name (vim's `x~` backup): it comes back when a file of its
    /// old name is created in the same directory, and is deleted with this file otherwise.
    var detachedRecord: (inode: Inode, name: String)?
    /// A new note or attachment not saved yet: `inode` is a reserved record identity and the first
    /// flush saves it as a record (one commit per new file instead of two).
    var isPendingRecord = false
    /// The target of a scratch symlink (emacs' `.#x` lock link); nil for a regular scratch file.
    var symlinkTarget: [UInt8]?
    /// Whether `modificationTime` was set explicitly (utimensat before the first save).
    var modificationTimeWasSet = false
    /// An `O_TMPFILE` file no `link` has named yet: in no listing, never saved, gone with its last
    /// handle (NotesFileSystem+Tmpfile.swift).
    var isUnnamed = false
    /// Its extended attributes (`setxattr` before the first save): written with that save.
    var extendedAttributes = ExtendedAttributes()

    init(inode: Inode, parent: Inode, name: String, content: ContentBuffer, mode: mode_t, uid: uid_t, gid: gid_t) {
        self.inode = inode
        self.parent = parent
        self.name = name
        self.content = content
        self.mode = mode
        self.uid = uid
        self.gid = gid
        modificationTime = .now
    }
}
