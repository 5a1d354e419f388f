import Foundation
import RecordStore

/// What a prune deletes and the bytes before and after it.
public struct PrunePlan: Sendable, Equatable {
    /// The versions to delete.
    public var deleting: [RecordID] = []
    /// Versions a prune rewrote as deltas (``VersionCompaction``); none in a plan not carried out.
    public var compacted = 0
    /// Bytes the versions hold before and after (their `size`: a shared asset counts in each).
    public var versionBytesBefore: Int64 = 0
    public var versionBytesAfter: Int64 = 0
    /// Bytes of the live notes and attachments.
    public var liveBytes: Int64 = 0
    /// What versions may take: ``HistorySettings/budgetFraction`` of live bytes plus versions.
    public var budget: Int64 = 0
}

/// Which versions history keeps as they age (``HistorySettings``): every version for
/// ``HistorySettings/keepAll`` (7 days), then the newest of each day until
/// ``HistorySettings/keepDaily`` (90 days), then the newest of each week; and in all, no more bytes
/// than the budget (a version kept as a delta counts its delta): the oldest go first, the newest
/// version of each live note after all others (a deleted note's last version goes too when the
/// budget needs its room: then it cannot be undeleted).
/// Ages are from the version's date (the state it keeps was written then).
///
/// A prune is one modify of deletes: a crash leaves all of it or none.
public enum VersionRetention {
    /// The versions retention would delete now.
    public static func plan(in database: RecordDatabase, settings: HistorySettings, now: Date = Date()) -> PrunePlan {
        var plan = PrunePlan()
        var byNote: [String: [RecordMetadata]] = [:]
        var live = Set<String>()
        for metadata in database.metadata(where: { [Note.recordType, Attachment.recordType, Version.recordType].contains($0.recordType) }) {
            if metadata.recordType == Version.recordType {
                byNote[metadata.field("note")?.stringValue ?? "", default: []].append(metadata)
                plan.versionBytesBefore += size(metadata)
            } else {
                plan.liveBytes += size(metadata)
                live.insert(metadata.recordID.recordName)
            }
        }
        var doomed = Set<String>()
        // Survivors that the budget may still take, with their dates; `newest`: a live note's
        // newest version (the budget takes those last).
        var candidates: [(newest: Bool, date: Date, metadata: RecordMetadata)] = []
        for versions in byNote.values {
            let sorted = versions.sorted { VersionHistory.date(of: $0) > VersionHistory.date(of: $1) }  // newest first
            var seenBuckets = Set<Int64>()
            for (index, metadata) in sorted.enumerated() {
                let date = VersionHistory.date(of: metadata)
                let age = now.timeIntervalSince(date)
                let bucket: Int64?
                if age < settings.keepAll {
                    bucket = nil
                } else if age < settings.keepDaily {
                    bucket = Int64(floor(date.timeIntervalSince1970 / 86_400)) * 2
                } else {
                    bucket = Int64(floor(date.timeIntervalSince1970 / (7 * 86_400))) * 2 + 1
                }
                if let bucket, !seenBuckets.insert(bucket).inserted {
                    doomed.insert(metadata.recordID.recordName)
                } else {
                    candidates.append((index == 0 && live.contains(metadata.field("note")?.stringValue ?? ""), date, metadata))
                }
            }
        }
        plan.versionBytesAfter =
            plan.versionBytesBefore
            - byNote.values.joined().filter { doomed.contains($0.recordID.recordName) }.reduce(0) {
                $0 + size($1)
            }
        plan.budget = Int64((Double(plan.liveBytes + plan.versionBytesAfter) * settings.budgetFraction).rounded(.down))
        if plan.versionBytesAfter > plan.budget {
            // Oldest first, each live note's newest version after all others; the budget counts
            // live bytes plus what versions remain.
            for candidate in candidates.sorted(by: { ($0.newest ? 1 : 0, $0.date) < ($1.newest ? 1 : 0, $1.date) }) {
                let budget = Int64((Double(plan.liveBytes + plan.versionBytesAfter) * settings.budgetFraction).rounded(.down))
                if plan.versionBytesAfter <= budget { break }
                doomed.insert(candidate.metadata.recordID.recordName)
                plan.versionBytesAfter -= size(candidate.metadata)
            }
            plan.budget = Int64((Double(plan.liveBytes + plan.versionBytesAfter) * settings.budgetFraction).rounded(.down))
        }
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

    /// The bytes a note, attachment or version holds (its content asset, else its text; a
    /// version kept as a delta, the delta).
    static func size(_ metadata: RecordMetadata) -> Int64 { min(max(0, storedSize(metadata)), sizeLimit) }

    /// The most one record counts for: a `size` or an asset's size from a hostile server may say
    /// anything, and millions of them must still sum without overflowing.
    public static let sizeLimit: Int64 = 1 << 40

    private static func storedSize(_ metadata: RecordMetadata) -> Int64 {
        if metadata.recordType == Version.recordType, VersionCompaction.isDelta(metadata) {
            // Kept as a delta: what it stores.
            let middle = metadata.sizes["deltaText"] ?? metadata.field("deltaText")?.stringValue?.utf8.count ?? 0
            return Int64(middle + VersionDelta.overhead)
        }
        if metadata.recordType == Version.recordType, let size = metadata.field("size")?.int64Value { return max(0, size) }
        if let asset = metadata.field("content")?.assetValue { return asset.size }
        if let size = metadata.sizes["text"] { return Int64(size) }
        return Int64(metadata.field("text")?.stringValue?.utf8.count ?? 0)
    }
}
