/// The tags a test carries for what it needs beyond the process: a mount, a PostgreSQL server, or
/// more time than a quick run has. `scripts/test.sh --fast` leaves out every test that carries one.

import Testing

extension Tag {
    /// The test mounts a filesystem (FUSE, in process or in a `notesfs` child; or a tmpfs).
    @Tag public static var mount: Self
    /// The test runs against a throwaway PostgreSQL server (``TestCluster``).
    @Tag public static var postgres: Self
    /// The test takes seconds on its own (big files, many processes, kills, long timeouts).
    @Tag public static var slow: Self
}
