import Foundation

/// One fault `check()` found in a database directory.
public enum CheckProblem: Sendable, Hashable, CustomStringConvertible {
    /// A record file that is not a valid record (truncated, not JSON, wrong types, misplaced).
    case damagedRecordFile(path: String, reason: String)
    /// A record the index knows whose file is gone.
    case missingRecordFile(RecordID, path: String)
    /// A reference to a record that does not exist.
    case danglingReference(from: RecordID, key: String, to: RecordID)
    /// An asset a record uses whose file is gone.
    case missingAsset(RecordID, key: String, path: String)
    /// An asset file no record uses.
    case orphanedAsset(path: String)
    /// A file that does not belong in the database directory.
    case foreignFile(path: String)

    public var description: String {
        switch self {
        case .damagedRecordFile(let path, let reason): "damaged record file \(path): \(reason)"
        case .missingRecordFile(let id, let path): "record \(id): file \(path) is missing"
        case .danglingReference(let from, let key, let to): "record \(from) field \(key) references missing record \(to)"
        case .missingAsset(let id, let key, let path): "record \(id) field \(key): asset \(path) is missing"
        case .orphanedAsset(let path): "orphaned asset \(path) (no record uses it)"
        case .foreignFile(let path): "foreign file \(path)"
        }
    }

    /// The file the problem is about, if any.
    public var path: String? {
        switch self {
        case .damagedRecordFile(let path, _), .missingRecordFile(_, let path), .missingAsset(_, _, let path),
            .orphanedAsset(let path), .foreignFile(let path):
            path
        case .danglingReference: nil
        }
    }
}

/// What `check()` found and, with repair, did.
public struct CheckReport: Sendable {
    public var problems: [CheckProblem]
    /// Files moved into `<db>/damaged/` by a repair (never deleted).
    public var movedAside: [String] = []
    /// Records dropped from the index because their file was damaged or missing (their bytes are in `damaged/`).
    public var droppedRecords: [RecordID] = []
    public var recordsChecked: Int
}

extension RecordDatabase {
    /// Checks every file of the database (fsck): reads each record file, compares with the index,
    /// checks references and assets. Never throws for damage: it is reported.
    ///
    /// With `repair`, damaged and foreign files are moved into `<db>/damaged/<time>/` and records
    /// whose file is unusable are dropped from the index; nothing is deleted.
    public func check(repair: Bool = false) throws(RecordStoreError) -> CheckReport {
        try refresh()
        let index = state.withLock { $0.index }
        var problems: [CheckProblem] = []
        var usable = Set<String>()
        var assetsInUse = Set<String>()
        var recordsChecked = 0
        RecordFiles.scan(layout) { path, result in
            recordsChecked += 1
            switch result {
            case .failure(let error): problems.append(.damagedRecordFile(path: path, reason: error.description))
            case .success(let record):
                if index.entries[record.recordID.recordName] == nil {
                    problems.append(.foreignFile(path: path))
                } else {
                    usable.insert(record.recordID.recordName)
                }
            }
        }
        for (name, metadata) in index.entries.sorted(by: { $0.key < $1.key }) {
            let path = layout.recordPath(name)
            if !usable.contains(name), !problems.contains(where: { $0.path == path }) {
                problems.append(.missingRecordFile(metadata.recordID, path: path))
            }
            for (key, reference) in metadata.record.references where index.entries[reference.recordID.recordName] == nil {
                problems.append(.danglingReference(from: metadata.recordID, key: key, to: reference.recordID))
            }
            for (key, value) in metadata.record.fields.sorted(by: { $0.key < $1.key }) {
                for asset in value.assets {
                    let assetPath = layout.assetPath(asset.sha256)
                    assetsInUse.insert(assetPath)
                    if (try? Sys.fileStatus(assetPath)) == nil { problems.append(.missingAsset(metadata.recordID, key: key, path: assetPath)) }
                }
            }
        }
        let fm = FileManager.default
        for shard in ((try? fm.contentsOfDirectory(atPath: layout.assets)) ?? []).sorted() {
            let dir = layout.assets + "/" + shard
            for name in ((try? fm.contentsOfDirectory(atPath: dir)) ?? []).sorted() {
                let path = dir + "/" + name
                if !assetsInUse.contains(path) { problems.append(.orphanedAsset(path: path)) }
            }
        }
        let known: Set<String> = ["notesfs.json", "lock", "journal.jsonl", "index.jsonl", "records", "assets", "tmp", "damaged"]
        for name in ((try? fm.contentsOfDirectory(atPath: layout.root)) ?? []).sorted() where !known.contains(name) && !name.hasPrefix("journal.damaged-") {
            problems.append(.foreignFile(path: layout.root + "/" + name))
        }
        var report = CheckReport(problems: problems, recordsChecked: recordsChecked)
        if repair { try self.repair(&report, index: index) }
        return report
    }

    private func repair(_ report: inout CheckReport, index: RecordIndex) throws(RecordStoreError) {
        let stamp = ISO8601DateFormatter().string(from: Date()).replacingOccurrences(of: ":", with: "-")
        let aside = layout.damaged + "/" + stamp
        var unusable: [RecordID] = []
        for problem in report.problems {
            switch problem {
            case .damagedRecordFile(let path, _), .foreignFile(let path):
                // Only files inside records/; anything else in the directory may be the user's.
                guard path.hasPrefix(layout.records + "/") else { continue }
                let relative = String(path.dropFirst(layout.root.count + 1))
                let target = aside + "/" + relative
                do {
                    try FileManager.default.createDirectory(
                        atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                } catch { throw .io(path: target, operation: "mkdir", errno: EIO) }
                try Sys.rename(path, target)
                report.movedAside.append(target)
                if let name = index.entries.first(where: { layout.recordPath($0.key) == path })?.key {
                    unusable.append(RecordID(recordName: name))
                }
            case .missingRecordFile(let id, _):
                unusable.append(id)
            default:
                break
            }
        }
        guard !unusable.isEmpty else { return }
        // Drop them from the index without cascading: their referrers stay (fsck then reports dangling references).
        let entry = try commit { (index, seq) throws(RecordStoreError) in
            JournalEntry(seq: seq, saves: [], deletes: unusable.filter { index.entries[$0.recordName] != nil })
        }
        report.droppedRecords = entry.deletes
    }
}

extension Record {
    /// Every asset in the record's fields (an asset used twice is listed twice).
    var assets: [Asset] { fields.values.flatMap(\.assets) }
}

extension FieldValue {
    /// Every asset in this value, including those inside lists.
    var assets: [Asset] {
        switch self {
        case .asset(let a): [a]
        case .list(let items): items.flatMap(\.assets)
        default: []
        }
    }
}
