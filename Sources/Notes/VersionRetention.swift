import Foundation
import RecordStore

/// What a prune deletes and the bytes before and after it.
public struct PrunePlan: Sendable, Equatable {
    /// The versions to delete.
    public var deleting: [RecordID] = []
    /// Versions a prune rewrote as deltas (``VersionCompaction``); none in a plan not carried out.
    public var compacted = 0
    /// Bytes the versions hold before and after (what each really stores: its text, its asset's
    /// file, its delta; a shared asset counts in each).
    public var versionBytesBefore: Int64 = 0
    public var versionBytesAfter: Int64 = 0
    /// Bytes of the live notes and attachments.
    public var liveBytes: Int64 = 0
    /// What versions may take: ``HistorySettings/budgetFraction`` of live bytes plus versions,
    /// and never less than ``HistorySettings/floorBytes``.
    public var budget: Int64 = 0
}

/// Which versions history keeps as they age (``HistorySettings``).
///
/// Always kept (neither thinned nor taken for space): every version made in the last
/// ``HistorySettings/keepAll`` (7 days), the newest ``HistorySettings/keepLast`` (10) of each note,
/// and the version a delete, restore, merge, conflict or rename replaced, for
/// ``HistorySettings/keepDaily`` (90 days) after it was made. Of the others, the newest of each
/// day is kept until ``HistorySettings/keepDaily``, then the newest of each week. For space, and
/// only while versions take more than the budget (``HistorySettings/budgetFraction`` of the
/// database, never less than ``HistorySettings/floorBytes``), the oldest of the others go first.
///
/// Bytes are what a record really holds (its text's UTF-8 length, its asset's file, a delta's
/// stored bytes), never its `size` field: a forged size cannot make a prune delete more.
/// Ages are from the version's date (the state it keeps was written then), or from when it was
/// made when that is later.
///
/// A prune is one modify of deletes: a crash leaves all of it or none.
public enum VersionRetention {
    /// The kinds of versions kept for ``HistorySettings/keepDaily`` after they were made: what
    /// someone may want to undo.
    static let eventKinds = Set([Version.Kind.delete, .restore, .merge, .conflict, .rename].map(\.rawValue))

    /// The versions retention would delete now.
    ///
    /// One pass over the notes, attachments and versions keeps a few words of each version (a
    /// ``VersionEntry``), not its metadata: a database of 100,000 deleted notes holds 100,000
    /// versions, whose metadata a daemon held all at once at every prune.
    public static func plan(in database: RecordDatabase, settings: HistorySettings, now: Date = Date()) -> PrunePlan {
        var plan = PrunePlan()
        var sizes = Sizes(database: database)
        var byNote: [String: [VersionEntry]] = [:]
        var liveAssets: [Asset] = []
        // One scan, so that every record is seen at one commit. Only what the metadata says here
        // (the index's lock is held); asset files are looked at after.
        database.forEachMetadata { metadata in
            switch metadata.recordType {
            case Version.recordType:
                let entry = VersionEntry(metadata, stored: Sizes.stored(metadata))
                byNote[metadata.field("note")?.stringValue ?? "", default: []].append(entry)
            case Note.recordType, Attachment.recordType:
                switch Sizes.stored(metadata) {
                case .bytes(let bytes): plan.liveBytes += Sizes.clamped(bytes)
                case .asset(let asset): liveAssets.append(asset)
                }
            default: break
            }
        }
        for asset in liveAssets { plan.liveBytes += sizes.size(.asset(asset)) }
        var versionSize: [String: Int64] = [:]
        for versions in byNote.values {
            for version in versions {
                let size = sizes.size(version.stored)
                versionSize[version.name] = size
                plan.versionBytesBefore += size
            }
        }
        var doomed = Set<String>()
        // Versions the budget may take, with their dates.
        var candidates: [(date: Date, name: String)] = []
        for versions in byNote.values {
            let sorted = versions.sorted { ($0.date, $0.name) > ($1.date, $1.name) }  // newest first
            var seenBuckets = Set<Int64>()
            for (index, version) in sorted.enumerated() {
                let date = version.date
                // Thinned by the age of the state it keeps; protected by the time since it was
                // made (a state written long ago and replaced today is today's version).
                let age = now.timeIntervalSince(date)
                let madeAge = now.timeIntervalSince(max(date, version.created ?? date))
                let bucket = age < settings.keepDaily ? Self.bucket(date, width: 86_400) * 2 : Self.bucket(date, width: 7 * 86_400) * 2 + 1
                // `!(a >= b)`: a damaged date (NaN) keeps the version rather than losing it.
                let kept =
                    index < settings.keepLast || !(madeAge >= settings.keepAll) || (version.isEvent && !(madeAge >= settings.keepDaily))
                let firstOfBucket = seenBuckets.insert(bucket).inserted
                if kept { continue }
                if firstOfBucket {
                    candidates.append((date, version.name))
                } else {
                    doomed.insert(version.name)
                }
            }
        }
        plan.versionBytesAfter = plan.versionBytesBefore - doomed.reduce(0) { $0 + (versionSize[$1] ?? 0) }
        func budget() -> Int64 {
            let share = Double(plan.liveBytes + plan.versionBytesAfter) * min(max(settings.budgetFraction, 0), 1)
            return max(settings.floorBytes, Int64(share.rounded(.down)))
        }
        // The oldest first, while versions take more than the budget.
        for candidate in candidates.sorted(by: { ($0.date, $0.name) < ($1.date, $1.name) }) {
            if plan.versionBytesAfter <= budget() { break }
            doomed.insert(candidate.name)
            plan.versionBytesAfter -= versionSize[candidate.name] ?? 0
        }
        plan.budget = budget()
        plan.deleting = doomed.sorted().map(RecordID.init(recordName:))
        return plan
    }

    /// Deletes what ``plan(in:settings:now:)`` names, in one modify (tried again once when another
    /// process deleted some of them meanwhile). Returns the plan carried out.
    ///
    /// - Throws: ``NotesError/store(_:)``.
    /// Keeps what versions it can as deltas (``VersionCompaction``) before and after.
    @discardableResult
    public static func prune(in database: RecordDatabase, settings: HistorySettings, now: Date = Date()) throws(NotesError) -> PrunePlan {
        // Deltas first, so that the budget counts what versions really take.
        // Compaction only saves room: its failure (a full disk) must not keep the prune from deleting.
        let before = (try? VersionCompaction.compact(in: database)) ?? VersionCompaction.Result()
        var plan = PrunePlan()
        for attempt in 0..<2 {
            plan = self.plan(in: database, settings: settings, now: now)
            guard !plan.deleting.isEmpty else { break }
            do {
                try database.modify(deleting: plan.deleting, reason: .prune)
                break
            } catch {
                if case .unknownItem = error, attempt == 0 { continue }
                throw .store(error)
            }
        }
        // The deltas of deleted versions were made whole in the same commit: deltas again.
        let after = (try? VersionCompaction.compact(in: database)) ?? VersionCompaction.Result()
        plan.compacted = before.compacted + after.compacted
        return plan
    }

    /// The number of the day (week: `width`) `date` falls in; one number for every date out of
    /// range (a damaged record), so that no conversion traps.
    static func bucket(_ date: Date, width: TimeInterval) -> Int64 {
        let number = (date.timeIntervalSince1970 / width).rounded(.down)
        return number.isFinite && abs(number) < 1e12 ? Int64(number) : -(1 << 50)
    }

    /// The most one record counts for, so that millions of them sum without overflowing.
    public static let sizeLimit: Int64 = 1 << 40

    /// What a plan keeps of one version.
    struct VersionEntry {
        let name: String
        /// The state's date (``VersionHistory/date(of:)``) and when the version was made.
        let date: Date
        let created: Date?
        /// A delete, restore, merge, conflict or rename (``eventKinds``).
        let isEvent: Bool
        let stored: Sizes.Stored

        init(_ metadata: RecordMetadata, stored: Sizes.Stored) {
            name = metadata.recordID.recordName
            date = VersionHistory.date(of: metadata)
            created = metadata.creationDate
            isEvent = eventKinds.contains(metadata.field("kind")?.stringValue ?? "")
            self.stored = stored
        }
    }

    /// The bytes records really hold: a text's UTF-8 length, an asset's file on disk (each file
    /// looked at once), a delta's stored bytes; never a `size` field a server may have forged.
    struct Sizes {
        let database: RecordDatabase
        private var assetBytes: [String: Int64] = [:]

        init(database: RecordDatabase) { self.database = database }

        /// Where a record's bytes are: counted in its metadata, or its asset's file.
        enum Stored {
            case bytes(Int64)
            case asset(Asset)
        }

        /// Between 0 and ``VersionRetention/sizeLimit``.
        mutating func size(_ stored: Stored) -> Int64 {
            switch stored {
            case .bytes(let bytes): Self.clamped(bytes)
            case .asset(let asset): Self.clamped(fileSize(asset))
            }
        }

        static func clamped(_ bytes: Int64) -> Int64 { min(max(0, bytes), sizeLimit) }

        /// What `metadata` says of its bytes (no file is looked at).
        static func stored(_ metadata: RecordMetadata) -> Stored {
            if metadata.recordType == Version.recordType, VersionCompaction.isDelta(metadata) {
                let middle = metadata.sizes["deltaText"] ?? metadata.field("deltaText")?.stringValue?.utf8.count ?? 0
                return .bytes(Int64(middle + VersionDelta.overhead))
            }
            if let asset = metadata.field("content")?.assetValue { return .asset(asset) }
            if let size = metadata.sizes["text"] { return .bytes(Int64(size)) }
            return .bytes(Int64(metadata.field("text")?.stringValue?.utf8.count ?? 0))
        }

        /// The size of the asset's file (0 when it is not there).
        private mutating func fileSize(_ asset: Asset) -> Int64 {
            let path = database.assetPath(asset)
            if let known = assetBytes[path] { return known }
            var info = stat()
            let size = stat(path, &info) == 0 ? Int64(info.st_size) : 0
            assetBytes[path] = size
            return size
        }
    }
}
