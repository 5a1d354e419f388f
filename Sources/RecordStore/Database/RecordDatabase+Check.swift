import Foundation

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

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
    /// An asset a record uses whose file is not the size the record says (`size`; the file's: `fileSize`).
    case assetSizeMismatch(RecordID, key: String, path: String, size: Int64, fileSize: Int64)
    /// An asset file no record uses.
    case orphanedAsset(path: String)
    /// A file that does not belong in the database directory.
    case foreignFile(path: String)
    /// A readable record file whose record the index lacks (its journal line was lost): the
    /// record file is the truth, and a repair puts the record back in the index.
    case unindexedRecordFile(RecordID, path: String)
    /// A file or directory of the database that others may read or write (`mode`: its permission bits).
    case looseMode(path: String, mode: UInt32)
    /// Records whose `key` references lead back to themselves (a folder inside itself); `members` is the cycle.
    case referenceCycle(key: String, members: [RecordID])
    /// A journal line the open could not read: kept in `lost+found/`, replaced by what the record
    /// files hold, the lines after it applied; names the records whose change it held is lost.
    case damagedJournalLine(JournalLineDamage)
    /// The record index file (derived) disagrees with itself: it is rebuilt from the record files
    /// at the next refresh, which costs time, never a record.
    case damagedIndex(path: String, reason: String)

    public var description: String {
        switch self {
        case .damagedRecordFile(let path, let reason): "damaged record file \(path): \(reason)"
        case .missingRecordFile(let id, let path): "record \(id): file \(path) is missing"
        case .danglingReference(let from, let key, let to): "record \(from) field \(key) references missing record \(to)"
        case .missingAsset(let id, let key, let path): "record \(id) field \(key): asset \(path) is missing"
        case .assetSizeMismatch(let id, let key, let path, let size, let fileSize):
            "record \(id) field \(key): asset \(path) is \(size) bytes, its file \(fileSize)"
        case .orphanedAsset(let path): "orphaned asset \(path) (no record uses it)"
        case .foreignFile(let path): "foreign file \(path)"
        case .unindexedRecordFile(let id, let path): "record file \(path) holds record \(id), which the index lacks"
        case .looseMode(let path, let mode):
            "\(path) has mode \(String(mode, radix: 8)): others may read it (should be \(String(mode & 0o040000 != 0 ? 0o700 : 0o600, radix: 8)))"
        case .referenceCycle(let key, let members):
            "records \(members.map(\.recordName).joined(separator: " → ")) form a cycle through field \(key)"
        case .damagedJournalLine(let damage): damage.description
        case .damagedIndex(let path, let reason): "record index \(path): \(reason); it is rebuilt from the record files"
        }
    }

    /// The file the problem is about, if any.
    public var path: String? {
        switch self {
        case .damagedRecordFile(let path, _), .missingRecordFile(_, let path), .missingAsset(_, _, let path),
            .assetSizeMismatch(_, _, let path, _, _), .orphanedAsset(let path), .foreignFile(let path), .looseMode(let path, _),
            .unindexedRecordFile(_, let path), .damagedIndex(let path, _):
            path
        case .damagedJournalLine(let damage): damage.copy
        case .danglingReference, .referenceCycle: nil
        }
    }
}

/// What `check()` found and, with repair, did.
public struct CheckReport: Sendable {
    public var problems: [CheckProblem]
    /// Files moved into `<db>/lost+found/` by a repair (never deleted).
    public var movedAside: [String] = []
    /// What a repair did besides moving files (modes fixed, cycles broken, orphans deleted).
    public var repaired: [String] = []
    /// Problems a repair could not fix, with why.
    public var unrepaired: [String] = []
    /// Records dropped from the index because their file was damaged or missing (their bytes are in `damaged/`).
    public var droppedRecords: [RecordID] = []
    public var recordsChecked: Int
}

extension RecordDatabase {
    /// Checks every file of the database (fsck): reads each record file, compares with the index,
    /// checks references and assets. Never throws for damage: it is reported.
    ///
    /// With `repair`, damaged, oversized and foreign files are moved into `<db>/lost+found/<time>/`
    /// and records whose file is unusable are dropped from the index; a readable record file the
    /// index lacks is never moved: its record is put back in the index; loose modes are tightened;
    /// a reference cycle is broken by clearing the field of one member; orphaned assets (unused
    /// for longer than ``assetGracePeriod``) are deleted. Nothing else is deleted.
    public func check(repair: Bool = false) throws(RecordStoreError) -> CheckReport {
        try refresh()
        let (index, orphans, unwritten) = state.withLock {
            ($0.index, orphanedAssets($0, olderThan: Self.assetGracePeriod), Set($0.unwrittenRecordFiles.keys.map(layout.recordPath)))
        }
        var problems: [CheckProblem] = []
        var usable = Set<String>()
        var assetsInUse = Set<String>()
        var recordsChecked = 0
        RecordFiles.scan(layout) { path, result in
            recordsChecked += 1
            // A file a full disk kept from being written (the journal holds its record) is no damage.
            guard !unwritten.contains(path) else { return }
            switch result {
            case .failure(let error): problems.append(.damagedRecordFile(path: path, reason: error.description))
            case .success(let record):
                if index.entries[record.recordID.recordName] == nil {
                    problems.append(.unindexedRecordFile(record.recordID, path: path))
                } else {
                    usable.insert(record.recordID.recordName)
                }
            }
        }
        for (name, metadata) in index.entries.sorted(by: { $0.key < $1.key }) {
            let path = layout.recordPath(name)
            // A record saved since the last checkpoint may have no file yet (the journal holds it whole).
            if !usable.contains(name), !problems.contains(where: { $0.path == path }), !unwritten.contains(path),
                !(index.staleRecordFiles.contains(name) && !metadata.isPartial)
            {
                problems.append(.missingRecordFile(metadata.recordID, path: path))
            }
            for (key, reference) in metadata.record.references where index.entries[reference.recordID.recordName] == nil {
                problems.append(.danglingReference(from: metadata.recordID, key: key, to: reference.recordID))
            }
            for (key, value) in metadata.record.fields.sorted(by: { $0.key < $1.key }) {
                for asset in value.assets {
                    let assetPath = layout.assetPath(asset.sha256)
                    assetsInUse.insert(assetPath)
                    if let status = try? Sys.fileStatus(assetPath) {
                        if Int64(status.st_size) != asset.size {
                            problems.append(
                                .assetSizeMismatch(
                                    metadata.recordID, key: key, path: assetPath, size: asset.size, fileSize: Int64(status.st_size)))
                        }
                    } else {
                        problems.append(.missingAsset(metadata.recordID, key: key, path: assetPath))
                    }
                }
            }
        }
        problems += orphans.map { CheckProblem.orphanedAsset(path: $0) }
        problems += Self.referenceCycles(index)
        problems += looseModes()
        let fm = FileManager.default
        let known: Set<String> = [
            "notesfs.json", "lock", "journal.jsonl", "index.jsonl", "records", "assets", "tmp", "damaged", "lost+found", "reserve",
            "sync",  // the sync engine's state (Sources/Sync/SyncState.swift)
            "indexes",  // derived indexes (Sources/Index): rebuilt from the records, never the truth
        ]
        for name in ((try? fm.contentsOfDirectory(atPath: layout.root)) ?? []).sorted()
        where !known.contains(name) && !name.hasPrefix("journal.damaged-") {
            problems.append(.foreignFile(path: layout.root + "/" + name))
        }
        problems += journalDamage.withLock { $0 }.map(CheckProblem.damagedJournalLine)
        let audit = state.withLock { state -> CheckProblem? in
            guard let base = state.index.entries.base, let reason = base.auditReferences() else { return nil }
            return .damagedIndex(path: base.path, reason: reason)
        }
        if let audit { problems.append(audit) }
        var report = CheckReport(problems: problems, recordsChecked: recordsChecked)
        if repair { try self.repair(&report, index: index) }
        return report
    }

    private func repair(_ report: inout CheckReport, index: RecordIndex) throws(RecordStoreError) {
        guard !isReadOnly else { throw .readOnly(path: path) }
        let lostAndFound = LostAndFound(layout)
        var unusable: [RecordID] = []
        var cycles: [(key: String, members: [RecordID])] = []
        var unindexed: [RecordID] = []
        for problem in report.problems {
            switch problem {
            case .damagedRecordFile(let path, _), .foreignFile(let path):
                // Only files inside records/; anything else in the directory may be the user's.
                guard path.hasPrefix(layout.records + "/") else {
                    report.unrepaired.append("\(path): not inside records/, left for you to look at")
                    continue
                }
                report.movedAside.append(try lostAndFound.moveAside(path))
                if let name = index.entries.first(where: { layout.recordPath($0.key) == path })?.key {
                    unusable.append(RecordID(recordName: name))
                }
            case .missingRecordFile(let id, _):
                unusable.append(id)
            case .unindexedRecordFile(let id, _):
                unindexed.append(id)
            case .looseMode(let path, let mode):
                if chmod(path, mode & UInt32(S_IFMT) == UInt32(S_IFDIR) ? Sys.directoryMode : Sys.fileMode) == 0 {
                    report.repaired.append("\(path): mode set to owner only")
                } else {
                    report.unrepaired.append("\(path): chmod: \(String(cString: strerror(errno)))")
                }
            case .referenceCycle(let key, let members):
                cycles.append((key, members))
            case .missingAsset(let id, let key, _):
                report.unrepaired.append(
                    "record \(id.recordName) field \(key): the asset's bytes are gone; restore the file or delete the record")
            case .assetSizeMismatch(let id, let key, _, _, _):
                report.unrepaired.append("record \(id.recordName) field \(key): the asset's size is wrong; edit or delete the record")
            case .danglingReference(let from, let key, let to):
                report.unrepaired.append(
                    "record \(from.recordName) field \(key): record \(to.recordName) is gone; delete or edit the record")
            case .orphanedAsset:
                break
            case .damagedIndex:
                break  // rebuilt below
            case .damagedJournalLine(let damage):
                // Done at open; reported once more here, and not by later checks.
                report.repaired.append("journal line at byte \(damage.offset): set aside at open")
                report.unrepaired += damage.lost.map { "record \($0.recordID.recordName): \($0.reason)" }
                journalDamage.withLock { $0.removeAll { $0 == damage } }
            }
        }
        if !unindexed.isEmpty {
            for id in try restoreUnindexedRecords(unindexed) {
                report.repaired.append("record \(id.recordName): put back in the index from its file")
            }
        }
        if report.problems.contains(where: { if case .orphanedAsset = $0 { true } else { false } }) {
            for path in try collectOrphanedAssets() { report.repaired.append("\(path): unused asset deleted") }
        }
        for (key, members) in cycles {
            // Clear the field of the first member: it becomes top-level and the others hang below it again.
            guard let first = members.first else { continue }
            do {
                var record = try readRecordFile(first)
                record[key] = nil
                try modify(saving: [record])
                report.repaired.append("record \(first.recordName): field \(key) cleared to break the cycle")
            } catch {
                report.unrepaired.append("record \(first.recordName): could not clear field \(key): \(error)")
            }
        }
        // A record whose index entry holds every field (none is large) loses nothing with its file:
        // the file is written again from the index. The others are dropped.
        let whole = unusable.filter { index.entries[$0.recordName].map { !$0.isPartial } ?? false }
        if !whole.isEmpty {
            state.withLock { $0.index.staleRecordFiles.formUnion(whole.map(\.recordName)) }
            try refreshWholeRecordFiles(limit: .max)
            for id in whole { report.repaired.append("record \(id.recordName): its file written again from the index") }
            unusable.removeAll { id in whole.contains(id) }
        }
        if report.problems.contains(where: { if case .damagedIndex = $0 { true } else { false } }) {
            try refresh()  // the audit marked the file damaged: this builds it again
            report.repaired.append("\(layout.metadataIndex): rebuilt from the record files")
        }
        guard !unusable.isEmpty else { return }
        // Drop them from the index without cascading: their referrers stay (fsck then reports dangling references).
        let entry = try commit { (index, seq) throws(RecordStoreError) in
            JournalEntry(seq: seq, saves: [], deletes: unusable.filter { index.entries[$0.recordName] != nil })
        }
        report.droppedRecords = entry.deletes
    }

    /// Puts the records of readable record files the index lacks back in the index, as their files
    /// hold them (change tag, dates and identity kept; an identity another record holds is replaced
    /// by a new one), in one commit. Returns those restored (a file that cannot be read now, or
    /// whose record a commit made meanwhile, is left out).
    private func restoreUnindexedRecords(_ ids: [RecordID]) throws(RecordStoreError) -> [RecordID] {
        let entry = try commit { (index, seq) throws(RecordStoreError) in
            var saves: [Record] = []
            var nextIdentity = index.nextIdentity
            var taken = Set<UInt64>()
            for id in ids where index.entries[id.recordName] == nil {
                guard var record = try? RecordFiles.read(id, layout: layout) else { continue }
                if let identity = record.identity, index.names[identity] != nil || !taken.insert(identity).inserted {
                    guard nextIdentity < .max else { throw .damagedRecord(nil, path: path, reason: "record identities are exhausted") }
                    record.identity = nextIdentity
                    taken.insert(nextIdentity)
                    nextIdentity += 1
                }
                saves.append(record)
            }
            return JournalEntry(seq: seq, saves: saves, deletes: [])
        }
        return entry.saves.map(\.recordID)
    }

    /// Chains of single references through one field that lead back to where they started.
    static func referenceCycles(_ index: RecordIndex) -> [CheckProblem] {
        var edges: [String: [String: String]] = [:]
        for (name, metadata) in index.entries {
            for (key, value) in metadata.record.fields {
                if case .reference(let reference) = value { edges[key, default: [:]][name] = reference.recordID.recordName }
            }
        }
        var problems: [CheckProblem] = []
        for (key, next) in edges.sorted(by: { $0.key < $1.key }) {
            var done = Set<String>()
            for start in next.keys.sorted() where !done.contains(start) {
                var path: [String] = []
                var onPath = Set<String>()
                var current = start
                while !done.contains(current) {
                    if onPath.contains(current) {
                        if let first = path.firstIndex(of: current) {
                            problems.append(.referenceCycle(key: key, members: path[first...].map(RecordID.init(recordName:))))
                        }
                        break
                    }
                    onPath.insert(current)
                    path.append(current)
                    guard let target = next[current] else { break }
                    current = target
                }
                done.formUnion(path)
            }
        }
        return problems
    }

    /// Every file and directory of the database that group or others may access.
    func looseModes() -> [CheckProblem] {
        var problems: [CheckProblem] = []
        var pending = [layout.root]
        while let dir = pending.popLast() {
            var st = stat()
            guard lstat(dir, &st) == 0 else { continue }
            if UInt32(st.st_mode) & 0o077 != 0 { problems.append(.looseMode(path: dir, mode: UInt32(st.st_mode))) }
            for name in ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).sorted() {
                let path = dir + "/" + name
                guard lstat(path, &st) == 0 else { continue }
                switch st.st_mode & S_IFMT {
                case S_IFDIR: pending.append(path)
                case S_IFREG where UInt32(st.st_mode) & 0o077 != 0: problems.append(.looseMode(path: path, mode: UInt32(st.st_mode)))
                default: break
                }
            }
        }
        return problems.sorted { ($0.path ?? "") < ($1.path ?? "") }
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

    /// Calls `body` for every asset in this value, lists included, with no array made (the
    /// index does it for each record it loads, and nearly none holds an asset).
    func forEachAsset(_ body: (Asset) -> Void) {
        switch self {
        case .asset(let a): body(a)
        case .list(let items): for item in items { item.forEachAsset(body) }
        default: break
        }
    }
}
