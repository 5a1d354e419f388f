import Foundation

/// The files of a database directory.
///
/// ```
/// <db>/notesfs.json      format version and database ID
/// <db>/lock              flock(2) target that serialises commits across processes
/// <db>/journal.jsonl     write-ahead log: one line per commit since the last checkpoint
/// <db>/indexes/records.sqlite  metadata of every record at the last checkpoint (derived: rebuilt when lost)
/// <db>/indexes/text.sqlite     full-text, link, tag and property index (derived, the Notes layer's)
/// <db>/records/xx/*.json one file per record (full record, jq-readable)
/// <db>/assets/xx/<sha256> asset contents by hash
/// <db>/tmp/              temp files before rename, asset pins (a dead process's are removed at open)
/// <db>/lost+found/<time>/ files fsck --repair or recovery moved aside (never deleted)
/// <db>/reserve           space held for deletes on a full disk
/// ```
///
/// Every directory is created 0700 and every file 0600, whatever the umask. No file is read whole
/// without a limit (the constants below): a larger one is reported as damaged, never loaded.
struct DatabaseLayout: Sendable {
    let root: String

    init(root: String) {
        var path = root
        while path.count > 1, path.hasSuffix("/") { path.removeLast() }
        self.root = path
    }

    var formatFile: String { root + "/notesfs.json" }
    var lockFile: String { root + "/lock" }
    var journal: String { root + "/journal.jsonl" }
    /// The index snapshot of versions before the metadata index (read once, to build it).
    var snapshot: String { root + "/index.jsonl" }
    var indexes: String { root + "/indexes" }
    /// The persistent metadata index (``MetadataIndexFile``).
    var metadataIndex: String { indexes + "/records.sqlite" }
    var records: String { root + "/records" }
    var assets: String { root + "/assets" }
    var temp: String { root + "/tmp" }
    /// Where older versions' `fsck --repair` moved files.
    var damaged: String { root + "/damaged" }
    var lostAndFound: String { root + "/lost+found" }
    /// Space held for deletes on a full disk (``RecordDatabase/ensureSpaceReserve(_:)``).
    var spaceReserve: String { root + "/reserve" }

    func recordPath(_ name: String) -> String { root + "/" + RecordFileName.relativePath(for: name) }
    /// The file of the asset `sha256`. A hash that is not 64 lower-case hex digits (the decoders
    /// and `modify` refuse one, so only a bug could bring it here) names a path in `assets/` that
    /// no asset ever has, never one outside it.
    func assetPath(_ sha256: String) -> String {
        guard Asset.isValidHash(sha256) else { return "\(assets)/not-a-hash" }
        return "\(assets)/\(sha256.prefix(2))/\(sha256)"
    }

    /// 1: journal lines hold full records; 2: a line may hold a partial record (a metadata-only
    /// save); 3: the index is `indexes/records.sqlite`, no longer `index.jsonl` (which a version
    /// of format 2 would read as the index and find behind the journal).
    static let formatVersion = 3

    /// Largest record file read (a record's JSON: its text and small byte fields).
    static let recordFileLimit = 64 << 20
    /// Largest journal line read (one commit: its records' JSON).
    static let journalLineLimit = 128 << 20
    /// Largest line of `index.jsonl` (the header holds the tombstones).
    static let snapshotLineLimit = 128 << 20
    /// Largest `notesfs.json`.
    static let formatFileLimit = 64 << 10
}
