import Foundation
import Notes
import POSIX
import RecordStore

/// fsck's check of note history: every `Version` record readable by the notes layer (fields of the
/// right types, a kind this notesfs knows; a delta whose chain of bases reads back) with a size
/// that matches its bytes. A version whose note is gone is not a problem (history outlives
/// deletes; `log --deleted` lists them). A damaged record file is the store's to report; a
/// readable but damaged version is reported once, with the way to remove it (`history rm`, or
/// `fsck --repair`, which keeps a copy in lost+found: ``moveAside(_:in:)``).
enum VersionRecordCheck {
    static func problems(in database: RecordDatabase) -> [String] { damaged(in: database).map(\.problem) }

    /// Each damaged version, with what is wrong with it.
    static func damaged(in database: RecordDatabase) -> [(id: RecordID, problem: String)] {
        var problems: [(id: RecordID, problem: String)] = []
        for metadata in database.metadata(ofType: Version.recordType) {
            let name = metadata.recordID.recordName
            let note = metadata.field("note")?.stringValue.map { " of record \($0)" } ?? ""
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

    /// Deletes the versions `ids` (in one modify) after writing each record as JSON into
    /// `<db>/lost+found/versions-<time>-<pid>/<name>.json`; returns the files written.
    ///
    /// - Throws: a ``CLIError`` when a copy cannot be written (then nothing is deleted) or the
    ///   delete fails.
    static func moveAside(_ ids: [RecordID], in database: RecordDatabase) throws(CLIError) -> [String] {
        guard !ids.isEmpty else { return [] }
        let stamp = Formatting.iso(Date()).replacingOccurrences(of: ":", with: "-")
        let directory = database.path + "/lost+found/versions-\(stamp)-\(getpid())"
        for path in [database.path + "/lost+found", directory] where mkdir(path, 0o700) != 0 && errno != EEXIST {
            throw CLIError.system("mkdir", path, errno: errno)
        }
        var written: [String] = []
        for id in ids {
            let record: Record
            do { record = try database.record(for: id) } catch { throw CLIError.store(error, subject: id.recordName) }
            let file = directory + "/" + EntryNames.suffixCharacters(id.recordName) + ".json"
            let fd = try FileSystem.createNewFile(file)
            defer { close(fd) }
            let bytes = Array((Formatting.json(record, path: nil).rendered() + "\n").utf8)
            try FileSystem.io { () throws(SystemCallError) in
                try Syscall.writeAll(fd, bytes, path: file)
                try Syscall.fsync(fd, path: file)
            }
            written.append(file)
        }
        do { try database.modify(deleting: ids, reason: .prune) } catch { throw CLIError.store(error, subject: database.path) }
        return written
    }

    /// What is wrong, without the version's name (the line names it once).
    static func reason(_ error: NotesError) -> String {
        switch error {
        case .damagedVersion(_, let reason): reason
        case .invalidField(_, let key): "field \(key) is missing or of the wrong type"
        default: error.description
        }
    }
}
