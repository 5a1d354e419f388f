import Foundation
import POSIX

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// The data key kept on this machine, so that syncing does not ask for the passphrase each time:
/// `<db>/sync/key`, mode 0600, JSON `{"keyID": "…", "key": "<base64>"}`.
///
/// Like ssh with a private key, it refuses a file that others could read (group or other bits in
/// its mode) or that another user owns: the key would then not be the owner's secret any more.
enum LocalKeyFile {
    /// The longest key file read: a key file is under 200 bytes; this bounds what a damaged one costs.
    static let sizeLimit = 4096

    /// The file's JSON form.
    private struct Contents: Codable {
        var keyID: String
        var key: String
    }

    /// `<db>/sync/key`.
    static func path(databasePath: String) -> String { databasePath + "/sync/key" }

    /// Writes `key` durably (temp file, fsync, rename, fsync of the directory) with mode 0600,
    /// making `<db>/sync` (mode 0700) when it is missing.
    ///
    /// - Throws: ``SyncError/state(path:reason:)``.
    static func save(_ key: DataKey, databasePath: String) throws(SyncError) {
        let path = path(databasePath: databasePath)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data: Data
        do { data = try encoder.encode(Contents(keyID: key.keyID, key: Data(key.key.bytes).base64EncodedString())) } catch {
            throw .state(path: path, reason: "cannot encode the key: \(error)")
        }
        try DurableFile.makeDirectory(databasePath + "/sync")
        try DurableFile.write(data + Data("\n".utf8), to: path)
    }

    /// The key kept on this machine; nil when there is none.
    ///
    /// - Throws: ``SyncError/state(path:reason:)`` when the file is not a regular file of this
    ///   user with no group or other permission bits (saying to `chmod 600` it), cannot be read,
    ///   or is damaged: not the JSON form, a key that is not 32 bytes, or a key ID that does not
    ///   match the key.
    static func load(databasePath: String) throws(SyncError) -> DataKey? {
        let path = path(databasePath: databasePath)
        let fd: Int32
        do { fd = try Syscall.open(path, O_RDONLY | O_NOFOLLOW) } catch {
            if error.errno == ENOENT { return nil }
            throw DurableFile.failure(error)
        }
        defer { Syscall.close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw DurableFile.failure(path, "fstat") }
        guard status.st_mode & S_IFMT == S_IFREG else { throw .state(path: path, reason: "the key file is not a regular file") }
        guard status.st_uid == geteuid() else {
            throw .state(path: path, reason: "the key file belongs to uid \(status.st_uid), not to this user (uid \(geteuid())): refused")
        }
        guard status.st_mode & 0o077 == 0 else {
            let mode = String(status.st_mode & 0o777, radix: 8)
            throw .state(
                path: path,
                reason: "the key file's permissions \(mode) are too open: others could read the key. Run 'chmod 600 \(path)' (refused)")
        }
        let bytes: [UInt8]
        do { bytes = try Syscall.readToEnd(fd, limit: sizeLimit + 1, path: path) } catch { throw DurableFile.failure(error) }
        guard bytes.count <= sizeLimit else { throw .state(path: path, reason: "damaged key file: more than \(sizeLimit) bytes") }
        guard let contents = try? JSONDecoder().decode(Contents.self, from: Data(bytes)) else {
            throw .state(path: path, reason: "damaged key file: not {\"keyID\": …, \"key\": …}")
        }
        guard let raw = Data(base64Encoded: contents.key) else {
            throw .state(path: path, reason: "damaged key file: the key is not base64")
        }
        let key: DataKey
        do { key = try DataKey(key: SymmetricKey(bytes: [UInt8](raw))) } catch {
            throw .state(path: path, reason: "damaged key file: \(error)")
        }
        guard key.keyID == contents.keyID else {
            throw .state(path: path, reason: "damaged key file: its key has the ID \(key.keyID), not \(contents.keyID) as the file says")
        }
        return key
    }

    /// Removes the key file (nothing when there is none), durably.
    ///
    /// - Throws: ``SyncError/state(path:reason:)``.
    static func remove(databasePath: String) throws(SyncError) {
        let path = path(databasePath: databasePath)
        try DurableFile.call { () throws(SystemCallError) in try Syscall.unlink(path) }  // ENOENT: nothing to do
        try DurableFile.syncDirectory(databasePath + "/sync")
    }
}
