import Foundation
import RecordStore

/// Paths as the mount shows them, both ways: a record's path from the root, and the entry a path
/// names.
extension FolderContents {
    /// Why a path names nothing.
    public enum PathError: Error, Equatable, Sendable {
        /// `path` (or a folder's record name) names nothing: `reason` says what is missing.
        case notFound(String, reason: String)
    }

    /// The components of a path (`/`-separated; empty ones and `.` left out).
    public static func components(_ path: String) -> [String] {
        path.split(separator: "/", omittingEmptySubsequences: true).map(String.init).filter { $0 != "." }
    }

    /// The path of a folder (or ``recoveredID``) from the root, without a trailing `/`.
    ///
    /// Walks up to the nearest folder whose path is known (or the root), then lists each folder
    /// on the way back down: no recursion, however deep the tree (the tree's placements end at
    /// the root or Recovered, so the walk up ends).
    /// - Throws: ``PathError/notFound(_:reason:)`` when `id` is no folder.
    public func folderPath(_ id: RecordID) throws(PathError) -> String {
        if let cached = folderPathCache[id] { return cached }
        var pending: [(id: RecordID, parent: RecordID?)] = []
        var current: RecordID? = id
        while let folder = current, folderPathCache[folder] == nil {
            let parent: RecordID?
            if folder == Self.recoveredID {
                parent = nil
            } else {
                guard let metadata = database.metadata(for: folder), placement(ofFolder: folder) != nil else {
                    throw .notFound(folder.recordName, reason: "no such folder")
                }
                parent = shownFolder(of: metadata)
            }
            pending.append((folder, parent))
            current = parent
        }
        // Top down: each listing's own paths need only its folder's path, now known.
        for (folder, parent) in pending.reversed() {
            if !isListed(parent), folder != Self.recoveredID, let metadata = database.metadata(for: folder),
                let entry = uncontestedEntry(metadata)
            {
                folderPathCache[folder] = entry.path
                continue
            }
            guard let entry = entry(folder, in: parent) else {
                throw .notFound(folder.recordName, reason: "no such folder")
            }
            folderPathCache[folder] = entry.path
        }
        return folderPathCache[id] ?? ""
    }

    /// The entry of any record as its folder shows it; nil when no folder shows it (a type the
    /// mount does not show, or a record that is gone). Named from its namesakes when its folder was
    /// not listed yet (``uncontestedEntry(_:)``), so that a few records' paths cost no listing;
    /// from the 17th record of one folder on, the folder is listed.
    public func entry(for id: RecordID) -> FolderEntry? {
        guard let metadata = database.metadata(for: id), EntryNames.kind(ofRecordType: metadata.recordType) != nil else { return nil }
        let folder = shownFolder(of: metadata)
        return entryFromNamesakes(metadata, in: folder) ?? entry(id, in: folder)
    }

    /// A record's path from the root (a folder's without a trailing `/`); nil when no folder shows it.
    public func path(of id: RecordID) -> String? { entry(for: id)?.path }

    /// Every folder's path from the root (no trailing `/`), by record name; the virtual
    /// `Recovered` folder's too when it shows. Walks down from the root: no recursion.
    ///
    /// `keepingListings`: whether each folder's listing is kept for later calls, as
    /// ``children(of:)`` keeps it; false keeps the paths only (all the listings would hold every
    /// entry of the database).
    public func folderPaths(keepingListings: Bool = true) -> [String: String] {
        var paths: [String: String] = [:]
        var pending: [RecordID?] = [nil]
        while let folder = pending.popLast() {
            let entries = keepingListings ? children(of: folder) : listing(of: folder)
            for entry in entries where entry.kind == .folder {
                guard paths[entry.recordID.recordName] == nil else { continue }
                paths[entry.recordID.recordName] = entry.path
                folderPathCache[entry.recordID] = entry.path  // what listing the folder itself needs
                pending.append(entry.recordID)
            }
        }
        return paths
    }

    /// The entry a path names; nil for the root (an empty path or `/`).
    ///
    /// The last component matches a file name, or a note's file name without `.md`. A folder not
    /// listed yet is not listed when the component is a name no other record contests
    /// (``uncontestedChild(named:in:)``).
    /// - Throws: ``PathError/notFound(_:reason:)`` naming the path.
    public func resolve(_ path: String) throws(PathError) -> FolderEntry? {
        let components = Self.components(path)
        var current: FolderEntry?
        for (position, component) in components.enumerated() {
            if let current, current.kind != .folder { throw .notFound(path, reason: "\(current.path) is not a folder") }
            let isLast = position == components.count - 1
            // Found from its namesakes, when it is not a name the folder's listing gave it.
            if !isListed(current?.recordID), let found = uncontestedChild(named: component, in: current?.recordID),
                isLast || found.kind == .folder
            {
                current = found
                continue
            }
            let entries = children(of: current?.recordID)
            let bytes = Array(component.utf8)
            if let found = entries.first(where: { Array($0.fileName.utf8) == bytes && (isLast || $0.kind == .folder) }) {
                current = found
            } else if isLast,
                let found = entries.first(where: {
                    $0.kind == .note && Array($0.fileName.utf8) == bytes + Array(EntryNames.noteExtension.utf8)
                })
            {
                current = found
            } else {
                throw .notFound(path, reason: "no such folder, note or attachment")
            }
        }
        return current
    }

    /// Resolves a path that must name a folder (or the root: nil).
    /// - Throws: ``PathError/notFound(_:reason:)`` when it names nothing or no folder.
    public func resolveFolder(_ path: String) throws(PathError) -> FolderEntry? {
        let entry = try resolve(path)
        if let entry, entry.kind != .folder { throw .notFound(path, reason: "not a folder") }
        return entry
    }
}
