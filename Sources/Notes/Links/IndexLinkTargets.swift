import Foundation
import Index

/// The files links can point at, as the index knows them (inside one read of it), each key looked
/// up once.
final class IndexLinkTargets: LinkTargets {
    let index: TextIndex
    private var cache: [String: [String]] = [:]
    /// The first error of a lookup (a lookup that fails answers nothing).
    private(set) var failure: SQLiteError?

    /// Files the index has no row for yet, by key (``add(_:)``).
    private var added: [String: [String]] = [:]

    init(index: TextIndex) { self.index = index }

    /// Counts the file at `path` among the targets, beside the index's rows (a file committed
    /// after the index's token).
    func add(_ path: String) {
        let key = LinkResolver.key(of: FileMove.lastComponent(path))
        added[key, default: []].append(path)
        cache[key] = nil
    }

    func paths(withKey key: String) -> [String] {
        if let known = cache[key] { return known }
        var paths: [String]
        do throws(SQLiteError) { paths = try index.paths(withKey: key) } catch {
            failure = failure ?? error
            paths = []
        }
        paths += added[key] ?? []
        cache[key] = paths
        return paths
    }
}

/// The files after some of them moved: `base` with each moved path replaced by its new one.
struct MovedLinkTargets<Base: LinkTargets>: LinkTargets {
    let base: Base
    /// Old path → new path.
    let moves: [String: String]
    /// New paths by key.
    let arrivals: [String: [String]]

    init(base: Base, moves: [String: String]) {
        self.base = base
        self.moves = moves
        var arrivals: [String: [String]] = [:]
        for new in moves.values { arrivals[LinkResolver.key(of: FileMove.lastComponent(new)), default: []].append(new) }
        self.arrivals = arrivals
    }

    func paths(withKey key: String) -> [String] {
        base.paths(withKey: key).filter { moves[$0] == nil } + (arrivals[key] ?? [])
    }
}

/// A file that moves: its path before and after.
public struct FileMove: Sendable, Hashable {
    public var oldPath: String
    public var newPath: String

    public init(oldPath: String, newPath: String) {
        self.oldPath = oldPath
        self.newPath = newPath
    }

    static func lastComponent(_ path: String) -> String {
        path.split(separator: "/", omittingEmptySubsequences: true).last.map(String.init) ?? path
    }
}
