/// `FUSEError`: why a session could not be created, mounted, or stopped.

/// Errors of session setup and teardown, with messages meant for the user.
public enum FUSEError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The command line could not be parsed.
    case invalidArguments(String)
    /// The mountpoint does not exist.
    case mountpointMissing(String)
    /// The mountpoint is not a directory.
    case mountpointNotDirectory(String)
    /// Something is already mounted there.
    case alreadyMounted(String)
    /// A dead FUSE mount is still attached there ("Transport endpoint is not connected").
    case staleMount(String)
    /// `fuse_session_new` refused the arguments (libfuse printed why on stderr).
    case sessionCreationFailed([String])
    /// `fuse_set_signal_handlers` failed.
    case signalHandlersFailed
    /// `fuse_daemonize` failed (the mount was undone).
    case daemonizeFailed
    /// `fuse_session_mount` failed (libfuse printed why on stderr).
    case mountFailed(String)
    /// The mountpoint could not be unmounted.
    case unmountFailed(String, Errno)
    /// The session loop did not end in time (a request handler hangs); the session was leaked.
    case loopDidNotStop(String)

    public var description: String {
        switch self {
        case .invalidArguments(let message): message
        case .mountpointMissing(let path): "mountpoint \(path) does not exist"
        case .mountpointNotDirectory(let path): "mountpoint \(path) is not a directory"
        case .alreadyMounted(let path):
            "\(path) is already a mountpoint (unmount it first with: fusermount3 -u \(path))"
        case .staleMount(let path):
            "\(path) is a dead FUSE mount (transport endpoint is not connected); detach it with: fusermount3 -uz \(path)"
        case .sessionCreationFailed(let arguments):
            "could not create the FUSE session with arguments \(arguments.joined(separator: " "))"
        case .signalHandlersFailed: "could not install signal handlers"
        case .daemonizeFailed: "could not go to the background (fuse_daemonize failed)"
        case .mountFailed(let path): "could not mount on \(path) (is /dev/fuse usable? see the message above)"
        case .unmountFailed(let path, let errno): "could not unmount \(path): \(errno)"
        case .loopDidNotStop(let path): "the FUSE session at \(path) did not stop (a request handler hangs)"
        }
    }
}
