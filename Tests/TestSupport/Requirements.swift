/// When a test can run: the conditions behind `.enabled(if:)`, so that a test that cannot run here
/// shows as skipped, never as passed. Each tagged test carries the matching condition beside its
/// tag: `@Suite(.tags(.mount), .needsFUSE)`, `@Test(.tags(.postgres), .needsPostgres)`,
/// `@Test(.tags(.slow), .notInFastRuns)`.

import Foundation
import Testing

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// What this test process was asked to run, from its environment.
public enum TestEnvironment {
    /// `NOTESFS_REQUIRE_FUSE=1` (CI): a mount test runs even when FUSE looks unusable, so that it
    /// fails instead of being skipped.
    public static let fuseRequired = ProcessInfo.processInfo.environment["NOTESFS_REQUIRE_FUSE"] == "1"

    /// `NOTESFS_REQUIRE_POSTGRES=1` (CI): a server test runs even without PostgreSQL installed, so
    /// that it fails instead of being skipped.
    public static let postgresRequired = ProcessInfo.processInfo.environment["NOTESFS_REQUIRE_POSTGRES"] == "1"

    /// `NOTESFS_TEST_FAST=1` (`scripts/test.sh --fast`): tests tagged `.mount`, `.postgres` or
    /// `.slow` are skipped.
    public static let fastOnly = ProcessInfo.processInfo.environment["NOTESFS_TEST_FAST"] == "1"

    /// `/dev/fuse` opens for reading and writing and `fusermount3` is installed (the mount itself
    /// may still fail: a test that gets this far and cannot mount fails).
    public static let fuseUsable: Bool = {
        let fd = open("/dev/fuse", O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { return false }
        close(fd)
        return ["/usr/bin/fusermount3", "/bin/fusermount3"].contains { (path: String) in access(path, X_OK) == 0 }
    }()

    /// The PostgreSQL server programs are installed (`scripts/deps.sh` installs them).
    public static let postgresInstalled: Bool = TestCluster.findBinaries() != nil
}

extension Trait where Self == ConditionTrait {
    /// Runs the test when it can mount through FUSE (or when `NOTESFS_REQUIRE_FUSE=1` demands it);
    /// skipped in a fast run.
    public static var needsFUSE: Self {
        .enabled(
            if: !TestEnvironment.fastOnly && (TestEnvironment.fuseRequired || TestEnvironment.fuseUsable),
            "needs /dev/fuse and fusermount3 (NOTESFS_REQUIRE_FUSE=1 makes it fail instead); not in fast runs")
    }

    /// Runs the test when it can start a throwaway PostgreSQL server (or when
    /// `NOTESFS_REQUIRE_POSTGRES=1` demands it); skipped in a fast run.
    public static var needsPostgres: Self {
        .enabled(
            if: !TestEnvironment.fastOnly && (TestEnvironment.postgresRequired || TestEnvironment.postgresInstalled),
            "needs PostgreSQL's initdb and postgres (scripts/deps.sh); not in fast runs")
    }

    /// Runs the test except in a fast run (`scripts/test.sh --fast`).
    public static var notInFastRuns: Self {
        .enabled(if: !TestEnvironment.fastOnly, "slow: not in fast runs")
    }
}
