/// Writes to a closed pipe or socket fail with `EPIPE` in the test process instead of killing it.

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Installs a `SIGPIPE` handler that only reports the signal (once per process, from the first
/// test that makes a directory, mounts or starts a server).
///
/// The mount daemon ignores `SIGPIPE` (libfuse's `fuse_set_signal_handlers`), but the tests run the
/// same code in process, where the default action killed the whole test process once
/// (`exited with unexpected signal code 13`) with no test named. A handler, unlike `SIG_IGN`, is
/// reset to the default at `exec`, so the programs the tests start see the signal as they would
/// anywhere; in this process the guilty write returns `EPIPE` and its test reports it.
public func reportBrokenPipes() { _ = brokenPipesReported }

private let brokenPipesReported: Void = {
    var action = sigaction()
    action.__sigaction_handler.sa_handler = { _ in
        let message = "notesfs tests: SIGPIPE (a write to a closed pipe or socket; it fails with EPIPE)\n"
        _ = message.withCString { write(STDERR_FILENO, $0, strlen($0)) }
    }
    sigemptyset(&action.sa_mask)
    action.sa_flags = SA_RESTART
    sigaction(SIGPIPE, &action, nil)
}()
