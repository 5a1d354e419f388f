import Foundation
import Notes
import RecordStore

/// Paths given on the command line, resolved by ``FolderContents`` (as the mount names
/// things), with a path that names nothing as a not-found ``CLIError``.
extension FolderContents {
    /// The entry a path names; nil for the root (an empty path or `/`). The last component
    /// matches a file name, or a note's file name without `.md`.
    /// - Throws: a not-found ``CLIError`` naming the path.
    func entry(at path: String) throws(CLIError) -> FolderEntry? {
        do { return try resolve(path) } catch { throw CLIError(error) }
    }

    /// The folder a path names (or the root: nil).
    /// - Throws: a not-found ``CLIError`` when it names nothing or no folder.
    func folder(at path: String) throws(CLIError) -> FolderEntry? {
        do { return try resolveFolder(path) } catch { throw CLIError(error) }
    }

    /// Splits a path for creating something: the existing folder it goes in and the new file name.
    ///
    /// - Throws: a usage ``CLIError`` for an empty path or a path in `Recovered`, not-found when
    ///   the folder is missing.
    func newEntry(at path: String) throws(CLIError) -> (folder: FolderEntry?, fileName: String) {
        var components = Self.components(path)
        guard let last = components.popLast() else { throw CLIError(.usage, path, "a name is needed") }
        let folder = try folder(at: components.joined(separator: "/"))
        if let folder { try Self.refuseVirtual(folder, path) }
        return (folder, last)
    }

    /// Refuses to change the virtual `Recovered` folder itself (it is no record).
    static func refuseVirtual(_ entry: FolderEntry, _ path: String) throws(CLIError) {
        guard entry.isVirtual else { return }
        throw CLIError(.usage, path, "\(FolderTree.recoveredName) is read-only: it shows damaged folders and notes; move them out of it")
    }
}

extension CLIError {
    /// A path that names nothing: not found.
    init(_ error: FolderContents.PathError) {
        switch error {
        case .notFound(let subject, let reason): self.init(.notFound, subject, reason)
        }
    }
}
