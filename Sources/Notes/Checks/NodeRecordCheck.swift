import RecordStore

/// fsck's check of the records the mount keeps for symlinks, special files and hard links: fields
/// of the right type (a `fileType` the mount knows, a `target`), and a `Link` that names a note,
/// attachment, symlink or special file (not a folder, another link, or nothing: the store reports
/// a dangling reference too).
public enum NodeRecordCheck {
    /// One line for each damaged record, naming its path when a folder shows it.
    public static func problems(in database: RecordDatabase, contents: FolderContents) -> [String] {
        var problems: [String] = []
        func report(_ metadata: RecordMetadata, _ text: String) {
            let path = contents.entry(for: metadata.recordID)?.path
            problems.append(
                (path.map { "\($0) (record \(metadata.recordID.recordName))" } ?? "record \(metadata.recordID.recordName)") + ": " + text)
        }
        for type in [Symlink.recordType, SpecialFile.recordType, Link.recordType] {
            for metadata in database.queryMetadata(Query(recordType: type)) {
                let record: Record
                do { record = try database.record(for: metadata.recordID) } catch { continue }  // the store's check reports it
                let valid: Result<Void, NotesError> =
                    switch type {
                    case Symlink.recordType: Result { () throws(NotesError) in _ = try Symlink(record: record) }
                    case SpecialFile.recordType: Result { () throws(NotesError) in _ = try SpecialFile(record: record) }
                    default: Result { () throws(NotesError) in _ = try Link(record: record) }
                    }
                if case .failure(let error) = valid {
                    report(metadata, error.description)
                    continue
                }
                guard type == Link.recordType, let target = record[FieldName.target]?.referenceValue?.recordID else { continue }
                guard let linked = database.metadata(for: target) else {
                    report(metadata, "hard link to record \(target.recordName), which does not exist")
                    continue
                }
                if !Link.targetTypes.contains(linked.recordType) {
                    report(metadata, "hard link to a \(linked.recordType) record (\(target.recordName))")
                }
            }
        }
        return problems
    }
}
