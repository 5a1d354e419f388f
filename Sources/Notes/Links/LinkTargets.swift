/// What a link can point at: the files of a vault, looked up by the key of their name.
///
/// Paths are vault paths: from the mount's root, `/`-separated, no leading `/`, with the file name
/// as the mount shows it (`Work/Plan B.md`, `img/pic.png`).
public protocol LinkTargets {
    /// Every file path whose last component has this key (`LinkResolver.key(of:)`); a handful,
    /// which the caller looks up in an index.
    func paths(withKey key: String) -> [String]
}

/// An in-memory set of vault paths (tests, small vaults).
public struct PathSet: LinkTargets, Sendable {
    private var byKey: [String: [String]] = [:]

    public init(_ paths: some Sequence<String>) {
        for path in paths {
            insert(path)
        }
    }

    /// Adds a path (a path already there is kept once).
    public mutating func insert(_ path: String) {
        let key = LinkResolver.key(of: LinkResolver.lastComponent(of: path))
        if byKey[key, default: []].contains(where: { $0.utf8.elementsEqual(path.utf8) }) { return }
        byKey[key, default: []].append(path)
    }

    /// Removes a path (exactly as inserted).
    public mutating func remove(_ path: String) {
        let key = LinkResolver.key(of: LinkResolver.lastComponent(of: path))
        byKey[key]?.removeAll { $0.utf8.elementsEqual(path.utf8) }
    }

    public func paths(withKey key: String) -> [String] {
        byKey[key] ?? []
    }
}
