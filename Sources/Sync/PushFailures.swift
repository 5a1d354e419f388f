import Foundation

/// Local records the last push could not send, and why, kept in `<db>/sync/failures.json` for
/// `sync status`: a record whose attachment file is damaged, or that the server refuses (a value
/// over one of PostgreSQL's limits). Such a record is left out of its batch, so that it never
/// holds back the others, and is tried again by every later sync until it goes through.
///
/// Written (whole, durably) by the push under `<db>/sync/lock`, only when it changed.
public struct PushFailure: Codable, Sendable, Equatable {
    public var recordName: String
    public var reason: String
    /// When it first failed for this reason.
    public var since: Date
}

enum PushFailures {
    static func path(forDatabase databasePath: String) -> String { databasePath + "/sync/failures.json" }

    /// The failures of the last push, by record name; empty when there is no file or it is damaged
    /// (it is only a report: the next push writes it again).
    static func load(databasePath: String) -> [String: PushFailure] {
        guard let data = FileManager.default.contents(atPath: path(forDatabase: databasePath)) else { return [:] }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        let list = (try? decoder.decode([PushFailure].self, from: data)) ?? []
        return Dictionary(list.map { ($0.recordName, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// Replaces the saved failures with `failures` (no write when they are the same).
    ///
    /// - Throws: ``SyncError/state(path:reason:)``.
    static func save(_ failures: [String: PushFailure], databasePath: String) throws(SyncError) {
        guard failures != load(databasePath: databasePath) else { return }
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        encoder.outputFormatting = [.sortedKeys]
        let list = failures.values.sorted { $0.recordName < $1.recordName }
        let data: Data
        do { data = try encoder.encode(list) } catch { throw .state(path: path(forDatabase: databasePath), reason: "\(error)") }
        try DurableFile.write(data, to: path(forDatabase: databasePath))
    }
}
