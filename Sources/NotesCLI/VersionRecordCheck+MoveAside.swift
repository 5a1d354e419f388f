import Foundation
import Notes
import POSIX
import RecordStore

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// `fsck --repair` of damaged versions (``VersionRecordCheck``): a copy of each in lost+found,
/// then one delete.
extension VersionRecordCheck {
    /// Deletes the versions `ids` (in one modify) after writing each record as JSON into
    /// `<db>/lost+found/versions-<time>-<pid>/<name>.json`; returns the files written.
    ///
    /// - Throws: a ``CLIError`` when a copy cannot be written (then nothing is deleted) or the
    ///   delete fails.
    static func moveAside(_ ids: [RecordID], in database: RecordDatabase) throws(CLIError) -> [String] {
        guard !ids.isEmpty else { return [] }
        let stamp = Formatting.iso(Date()).replacingOccurrences(of: ":", with: "-")
        let directory = database.path + "/lost+found/versions-\(stamp)-\(getpid())"
        for path in [database.path + "/lost+found", directory] where mkdir(path, 0o700) != 0 && errno != EEXIST {
            throw CLIError.system("mkdir", path, errno: errno)
        }
        var written: [String] = []
        for id in ids {
            let record: Record
            do { record = try database.record(for: id) } catch { throw CLIError.store(error, subject: id.recordName) }
            let file = directory + "/" + EntryNames.suffixCharacters(id.recordName) + ".json"
            let fd = try FileSystem.createNewFile(file)
            defer { close(fd) }
            let bytes = Array((Formatting.json(record, path: nil).rendered() + "\n").utf8)
            try FileSystem.io { () throws(SystemCallError) in
                try Syscall.writeAll(fd, bytes, path: file)
                try Syscall.fsync(fd, path: file)
            }
            written.append(file)
        }
        do { try database.modify(deleting: ids, reason: .prune) } catch { throw CLIError.store(error, subject: database.path) }
        return written
    }
}
