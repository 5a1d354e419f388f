/// `Entry` and `AttributesReply`: what lookup-like operations and getattr/setattr reply.

import CFuse

/// A directory entry reply (`struct fuse_entry_param`): every successful one that reaches the kernel
/// adds one to the inode's lookup count.
public struct Entry: Hashable, Sendable {
    public var inode: Inode
    public var generation: UInt64
    public var attributes: Attributes
    /// Seconds the kernel may cache `attributes`.
    public var attributeTimeout: Double
    /// Seconds the kernel may cache the name → inode mapping.
    public var entryTimeout: Double

    public init(
        inode: Inode, generation: UInt64 = 0, attributes: Attributes,
        attributeTimeout: Double = 1, entryTimeout: Double = 1
    ) {
        self.inode = inode
        self.generation = generation
        self.attributes = attributes
        self.attributeTimeout = attributeTimeout
        self.entryTimeout = entryTimeout
    }

    /// An entry from attributes, using `attributes.inode` as the inode.
    public init(_ attributes: Attributes, generation: UInt64 = 0, attributeTimeout: Double = 1, entryTimeout: Double = 1) {
        self.init(
            inode: attributes.inode, generation: generation, attributes: attributes,
            attributeTimeout: attributeTimeout, entryTimeout: entryTimeout)
    }

    /// A negative entry: lookup replies "no such name" and the kernel caches that for `timeout`
    /// seconds (no lookup reference is counted for inode 0). Invalidate it with
    /// `Notifier.invalidateEntry` when the name appears behind the kernel's back.
    public static func negative(timeout: Double) -> Entry {
        Entry(inode: 0, attributes: Attributes(inode: 0, mode: 0), attributeTimeout: 0, entryTimeout: timeout)
    }

    /// The C `fuse_entry_param`.
    var parameter: fuse_entry_param {
        var parameter = fuse_entry_param()
        parameter.ino = inode
        parameter.generation = generation
        parameter.attr = attributes.stat
        parameter.attr_timeout = attributeTimeout
        parameter.entry_timeout = entryTimeout
        return parameter
    }
}

/// A getattr/setattr reply: attributes and how long the kernel may cache them.
public struct AttributesReply: Hashable, Sendable {
    public var attributes: Attributes
    public var timeout: Double

    public init(_ attributes: Attributes, timeout: Double = 1) {
        self.attributes = attributes
        self.timeout = timeout
    }
}
