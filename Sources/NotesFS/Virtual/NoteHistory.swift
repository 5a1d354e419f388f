import Foundation
import Notes
import RecordStore
import Synchronization

/// `.history`: the versions of every note and attachment (``VersionHistory``) as read-only files,
/// at the paths of the real tree.
///
/// - `.history/` and `.history/Work/` list the folders and the notes (attachments) that have
///   versions, under the mount's own names (``HistoryCatalog``): `.history/Work/Plan.md/` is the
///   directory of `Work/Plan.md`'s versions.
/// - `.history/Work/Plan.md/` lists one file per version, oldest first, named by the version's
///   date in UTC (``VersionFileNames``: `2026-12-03T08-00-00.md`; versions of one second in the
///   order they were made: `…-1.md`, `…-2.md`), holding its bytes, with its date as mtime. The current text is not among them: it is the note itself.
/// - A deleted note's versions stay at the path it had: in its folder when the folder is still
///   there, in `.history/Recovered/` when it is gone too (where `note undelete` brings it back).
///   A deleted note whose path a note shown in the mount (or another deleted one) takes gets the
///   mount's record-name suffix: `Plan (1a2b3c).md`.
final class NoteHistory: VirtualTree {
    /// The last catalog made and the generation it was made at (``VirtualContext/generation``):
    /// every directory of one walk (`.history`, `Work`, `Plan.md`) shares it until the store or
    /// the mount's names change. A leaf lock: the catalog is made outside it.
    private let cache = Mutex<(generation: VirtualNodeTable.CacheKey, catalog: HistoryCatalog)?>(nil)

    var name: String { ".history" }

    func isDirectory(_ path: [String]) -> Bool { path.isEmpty }

    /// The catalog for `context`'s generation, made once per generation.
    private func catalog(_ context: VirtualContext) -> HistoryCatalog {
        if let cached = cache.withLock({ $0 }), cached.generation == context.generation { return cached.catalog }
        let catalog = HistoryCatalog(context)
        cache.withLock { $0 = (context.generation, catalog) }
        return catalog
    }

    func entries(in path: [String], _ context: VirtualContext) throws -> [VirtualEntry] {
        let catalog = self.catalog(context)
        if let noteName = catalog.notes[path] {
            // Oldest first; versions of one date in the order they were made (their names' `-1`, `-2`).
            let versions = VersionHistory.versions(ofNoteNamed: noteName, in: context.database).sorted {
                ($0.date, $0.madeAt, $0.recordID.recordName) < ($1.date, $1.madeAt, $1.recordID.recordName)
            }
            let names = VersionFileNames.names(versions.map(\.date), fileExtension: VersionFileNames.fileExtension(of: path.last ?? ""))
            let access = catalog.access(of: path)
            return zip(versions, names).map { version, name in
                .file(
                    VirtualFile(
                        name: name, size: Self.size(of: version), modificationDate: version.date, source: version.recordID, access: access))
            }
        }
        return (catalog.directories[path] ?? []).map { .directory($0, access: catalog.access(of: path + [$0])) }
    }

    /// The byte size of a version's content: its `size` field, else (a version written without
    /// one) its asset's size or its text's, as the index knows them.
    static func size(of version: Version) -> Int64 {
        if version.record["size"]?.int64Value != nil { return max(version.size, 0) }
        if let asset = version.content { return asset.size }
        if let text = version.text { return Int64(text.utf8.count) }
        return Int64(version.record.omittedSizes[FieldName.text] ?? 0)
    }

    /// The version's bytes: its text, or its content asset.
    /// - Throws: ``VirtualTreeError/noFile`` when the version is gone (pruned); the
    ///   ``NotesError`` (an I/O error to the caller) when it is there but damaged.
    func contents(of file: VirtualFile, _ context: VirtualContext) throws -> VirtualFileContents {
        let version: Version
        do { version = try VersionHistory.fullVersion(file.source, in: context.database) } catch {
            if case .store(.unknownItem) = error { throw VirtualTreeError.noFile }
            throw error
        }
        if let asset = version.content { return .asset(asset) }
        return .bytes(Array((version.text ?? "").utf8))
    }
}
