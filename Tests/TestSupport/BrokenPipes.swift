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

/// Ends the process as `SIGPIPE`'s default action would, with status 141 (128 + 13), when its
/// own standard output or error is a pipe nobody reads any more (`swift test … | head`): the test
/// output's writer retries a failed write for ever, and one such process was seen retrying at 73%
/// of a core for 16 minutes after its run had ended. Only async-signal-safe calls.
private func exitIfOutputIsGone() {
    func isGone(_ fd: Int32) -> Bool {
        var output = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        return poll(&output, 1, 0) > 0 && output.revents & Int16(POLLERR) != 0
    }
    if isGone(STDOUT_FILENO) || isGone(STDERR_FILENO) { _exit(128 + SIGPIPE) }
}

private let brokenPipesReported: Void = {
    var action = sigaction()
    action.__sigaction_handler.sa_handler = { _ in
        exitIfOutputIsGone()
        let message = "notesfs tests: SIGPIPE (a write to a closed pipe or socket; it fails with EPIPE)\n"
        _ = message.withCString { write(STDERR_FILENO, $0, strlen($0)) }
    }
    sigemptyset(&action.sa_mask)
    action.sa_flags = SA_RESTART
    sigaction(SIGPIPE, &action, nil)
}()
