import FUSE
import Foundation
import Notes
import RecordStore

extension NotesFileSystem {
    /// The stored form of `buffer`'s bytes for a record of `recordType`: streamed into an asset
    /// (`makeAsset(readingFrom:size:)`) for a spilled buffer, so memory stays bounded. Needs no
    /// state lock; the caller keeps the bytes from changing (``OpenFile/operationLock``).
    /// - Throws: the store's errors (`EIO`, `ENOSPC` once mapped), `Errno` from reading the buffer.
    func storedBytes(of buffer: ContentBuffer, recordType: String) throws -> StoredBytes {
        if recordType == Note.recordType, let bytes = try buffer.bytes(upTo: Note.maxInlineTextBytes),
            let text = Note.inlineText(bytes)
        {
            return .text(text)
        }
        let database = self.database
        return .asset(
            try buffer.withSource { source in
                switch source {
                case .bytes(let bytes): try database.makeAsset(Data(bytes))
                case .file(let descriptor, let count): try database.makeAsset(readingFrom: descriptor, size: count)
                }
            })
    }

    /// The bytes of a stored note or attachment as a new buffer: inline text, or the asset copied
    /// into a temp file (``ContentBuffer/load(fromFile:count:spillDirectory:)``). Needs no state lock.
    /// - Throws: `EISDIR` for a directory, the store's errors.
    func loadContent(_ node: Node) throws -> ContentBuffer {
        let directory = database.temporaryDirectoryPath
        switch node {
        case .scratch(let file): return file.content
        case .root, .recovered, .folder: throw Errno.isDirectory
        case .symlink, .special, .link: throw Errno.invalidArgument  // the kernel opens these itself
        case .note(let metadata), .attachment(let metadata):
            let bytes =
                try metadata.field(FieldName.content)?.assetValue.map(StoredBytes.asset)
                ?? StoredBytes(of: database.record(for: metadata.recordID))
            switch bytes {
            case .asset(let asset):
                return try ContentBuffer.load(fromFile: database.assetPath(asset), count: asset.size, spillDirectory: directory)
            case .text(let text):
                return ContentBuffer(Array(text.utf8), spillDirectory: directory)
            }
        }
    }
}

extension NotesFileSystem {
    /// `st_blocks` of a stored file: the 512-byte blocks its bytes take where they are kept, never
    /// more than its size rounded up to 512 (a filesystem's allocation unit is not shown: a 3-byte
    /// file counts one block where tmpfs says eight).
    ///
    /// - An asset: the asset file's `st_blocks`. Assets keep holes (`makeAsset(readingFrom:size:)`
    ///   copies only the data extents of a spilled buffer), so a byte written at 3 GiB counts one
    ///   page, not 3 GiB. An asset file that cannot be `stat`ed (missing: fsck reports it) counts
    ///   as fully stored.
    /// - A note's inline text (no asset): every byte, as the record holds every byte.
    /// - A buffer with unsaved bytes: ``ContentBuffer/storedBlocks``, the temp file's allocation
    ///   once spilled (the same extents its asset will have), else the size.
    ///
    /// So a file shows the same count while written, after close and after a remount as long as
    /// its bytes stay in one kind of storage. Where they move, the count follows what is stored:
    /// a small buffer (≤ 1 MiB, held densely in memory and saved densely) and a note's text (up to
    /// 8 MiB of UTF-8, and zeros are UTF-8, kept inline) count their holes as stored.
    /// Cost: one `stat` of the asset file (no bytes read) per attribute reply of an attachment.
    func storedBlocks(_ asset: Asset) -> UInt64 {
        let whole = Attributes.blocks(forSize: UInt64(clamping: asset.size))
        var status = Glibc.stat()
        guard stat(database.assetPath(asset), &status) == 0 else { return whole }
        return min(whole, UInt64(clamping: status.st_blocks))
    }
}
