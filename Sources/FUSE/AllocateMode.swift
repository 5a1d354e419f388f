/// `AllocateMode`: the flags of a fallocate(2) request (`linux/falloc.h`).

import CFuse

public struct AllocateMode: OptionSet, Sendable {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// Allocate without changing the file's size.
    public static let keepSize = AllocateMode(rawValue: FALLOC_FL_KEEP_SIZE)
    public static let punchHole = AllocateMode(rawValue: FALLOC_FL_PUNCH_HOLE)
    public static let collapseRange = AllocateMode(rawValue: FALLOC_FL_COLLAPSE_RANGE)
    public static let zeroRange = AllocateMode(rawValue: FALLOC_FL_ZERO_RANGE)
    public static let insertRange = AllocateMode(rawValue: FALLOC_FL_INSERT_RANGE)
}
