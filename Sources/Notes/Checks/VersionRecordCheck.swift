import Foundation
import RecordStore

/// fsck's check of note history: every `Version` record readable by the notes layer (fields of the
/// right types, a kind this notesfs knows; a delta whose chain of bases reads back) with a size
/// that matches its bytes. A version whose note is gone is not a problem (history outlives
/// deletes; `log --deleted` lists them). A damaged record file is the store's to report; a
/// readable but damaged version is reported once, with the way to remove it (`history rm`, or
/// `fsck --repair`, which keeps a copy in lost+found).
public enum VersionRecordCheck {
    /// One line for each damaged version, with the way to remove it.
    public static func problems(in database: RecordDatabase) -> [String] { damaged(in: database).map(\.problem) }

    /// Each damaged version, with what is wrong with it.
    public static func damaged(in database: RecordDatabase) -> [(id: RecordID, problem: String)] {
        var problems: [(id: RecordID, problem: String)] = []
        for metadata in database.metadata(ofType: Version.recordType) {
            let name = metadata.recordID.recordName
            let note = metadata.field(FieldName.note)?.stringValue.map { " of record \($0)" } ?? ""
            func report(_ problem: String) {
                problems.append(
                    (
                        metadata.recordID,
                        "version \(name)\(note): damaged: \(problem); remove it with 'notesfs history rm \(name)' (or fsck --repair)"
                    ))
            }
            let record: Record
            do { record = try database.record(for: metadata.recordID) } catch { continue }  // the store's check reports it
            let version: Version
            do { version = try Version(record: VersionHistory.materialized(record, in: database)) } catch {
                report(reason(error))
                continue
            }
            guard version.kind != nil else {
                report("unknown kind '\(version.kindName)'")
                continue
            }
            let actual = version.content?.size ?? Int64(version.text?.utf8.count ?? 0)
            if version.size != actual { report("size \(version.size), but it holds \(actual) bytes") }
        }
        return problems
    }

    /// What is wrong, without the version's name (the line names it once).
    public static func reason(_ error: NotesError) -> String {
        switch error {
        case .damagedVersion(_, let reason): reason
        case .invalidField(_, let key): "field \(key) is missing or of the wrong type"
        default: error.description
        }
    }
}
