/// `FileTime`: a point in time with nanoseconds, as stored in `struct stat`.

import Glibc

/// Seconds and nanoseconds since the epoch (`struct timespec`).
public struct FileTime: Hashable, Sendable, Comparable {
    public var seconds: Int64
    public var nanoseconds: Int64

    public init(seconds: Int64, nanoseconds: Int64 = 0) {
        self.seconds = seconds
        self.nanoseconds = nanoseconds
    }

    public init(_ time: timespec) {
        self.init(seconds: Int64(time.tv_sec), nanoseconds: Int64(time.tv_nsec))
    }

    /// The current wall-clock time (`clock_gettime(CLOCK_REALTIME)`).
    public static var now: FileTime {
        var time = Glibc.timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return FileTime(time)
    }

    /// The value as a C `timespec`.
    public var timespec: Glibc.timespec {
        Glibc.timespec(tv_sec: Int(seconds), tv_nsec: Int(nanoseconds))
    }

    public static func < (lhs: FileTime, rhs: FileTime) -> Bool {
        (lhs.seconds, lhs.nanoseconds) < (rhs.seconds, rhs.nanoseconds)
    }
}
