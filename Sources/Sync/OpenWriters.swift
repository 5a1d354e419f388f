import Foundation

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// The records a mount holds back from its pushes (open for writing, bytes saved since their last
/// `fsync`: ``SyncEngine/deferredRecords``), published in `<db>/sync/writers` as
/// `{"pid": …, "records": […]}` each time the mount's sync looks at them, so that a `notesfs sync`
/// run beside the mount holds them back too. Absent when there are none; ignored once the
/// process that wrote it is gone.
public enum OpenWriters {
    static func path(databasePath: String) -> String { databasePath + "/sync/writers" }

    /// Publishes `names` (removes the file when empty). Best effort: a failure leaves the CLI
    /// pushing what it would have pushed before.
    public static func publish(_ names: Set<String>, databasePath: String) {
        let path = path(databasePath: databasePath)
        guard !names.isEmpty else {
            unlink(path)
            return
        }
        let object: [String: Any] = ["pid": Int(getpid()), "records": names.sorted()]
        guard let data = try? JSONSerialization.data(withJSONObject: object) else { return }
        try? DurableFile.write(data, to: path)
    }

    /// The records a live mount of the database publishes; empty when none does.
    public static func read(databasePath: String) -> Set<String> {
        guard let data = FileManager.default.contents(atPath: path(databasePath: databasePath)),
            let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
            let pid = object["pid"] as? Int, let records = object["records"] as? [String],
            pid > 0, pid <= Int(Int32.max), kill(pid_t(pid), 0) == 0 || errno == EPERM
        else { return [] }
        return Set(records)
    }
}
