import Notes
import RecordStore

/// fsck's check of note history: every `Version` record readable by the notes layer (fields of the
/// right types, a kind this notesfs knows; a delta whose chain of bases reads back) with a size
/// that matches its bytes. A version whose note
/// is gone is not a problem (history outlives deletes; `log --deleted` lists them). A damaged
/// record file is the store's to report, and `--repair` moves only such files aside: every
/// readable version is kept, reported here but never dropped.
enum VersionRecordCheck {
    static func problems(in database: RecordDatabase) -> [String] {
        var problems: [String] = []
        for metadata in database.metadata(ofType: Version.recordType) {
            let name = metadata.recordID.recordName
            let record: Record
            do { record = try database.record(for: metadata.recordID) } catch { continue }  // the store's check reports it
            let version: Version
            do { version = try Version(record: VersionHistory.materialized(record, in: database)) } catch {
                problems.append("version \(name): damaged: \(error.description)")
                continue
            }
            guard version.kind != nil else {
                problems.append("version \(name) of record \(version.noteName): unknown kind '\(version.kindName)'")
                continue
            }
            let actual = version.content?.size ?? Int64(version.text?.utf8.count ?? 0)
            if version.size != actual {
                problems.append(
                    "version \(name) of record \(version.noteName): damaged: size \(version.size), but it holds \(actual) bytes")
            }
        }
        return problems
    }
}
