import POSIX

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Descriptors for a chain of nested directories, the top first, entered and left one level at a
/// time with `openat(2)`: no path is resolved again, no symbolic link is followed, and a tree of
/// any depth is walked with at most ``window`` descriptors open.
///
/// A level whose descriptor was closed to keep within the window is opened again, when the walk
/// comes back up to it, as `..` of the level below, and refused unless it is the same directory
/// (`st_dev`, `st_ino`) as before: a directory moved meanwhile cannot steer the walk elsewhere.
final class DirectoryChain {
    private struct Level {
        var fd: Int32
        var identity: FileSystem.Identity
        /// The caller's tag for this level (an item index); nil for the top.
        var tag: Int?
    }

    /// How many descriptors stay open at most (the top's and those of the deepest levels).
    static let window = 64

    private var levels: [Level]
    private var names: [String] = []
    /// The path of the top directory, for messages.
    let topPath: String

    /// Takes over `fd`, an open directory at `path` (closed with the chain).
    init(top fd: Int32, path: String) throws(CLIError) {
        topPath = path
        levels = [Level(fd: fd, identity: try FileSystem.identity(fd, path: path), tag: nil)]
    }

    /// Opens `path` as the top, following it as given (the user named it); nothing inside it is followed.
    ///
    /// - Throws: an I/O ``CLIError`` naming `path`.
    convenience init(opening path: String) throws(CLIError) {
        let fd = Syscall.retrying { open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        guard fd >= 0 else { throw CLIError.system("open", path, errno: errno) }
        do { try self.init(top: fd, path: path) } catch {
            close(fd)
            throw error
        }
    }

    deinit {
        for level in levels where level.fd >= 0 { close(level.fd) }
    }

    /// The descriptor of the deepest directory entered (always open).
    var current: Int32 { levels[levels.count - 1].fd }
    /// The tag of the deepest directory entered (nil: the top).
    var currentTag: Int? { levels[levels.count - 1].tag }
    /// How many directories are entered below the top.
    var depth: Int { levels.count - 1 }

    /// The path of `name` in the deepest directory, or of that directory itself, for messages
    /// (built on demand).
    func path(_ name: String? = nil) -> String {
        ([topPath] + names + (name.map { [$0] } ?? [])).joined(separator: "/")
    }

    /// Enters directory `name` of the current one (`O_NOFOLLOW`), tagged `tag`; when `expected` is
    /// given, refuses any other directory (one that replaced what a scan saw).
    ///
    /// - Throws: an I/O ``CLIError`` naming the path: a symbolic link or anything but a directory
    ///   in the way, or the directory changed.
    func enter(_ name: String, tag: Int?, expected: FileSystem.Identity? = nil) throws(CLIError) {
        let fd = try FileSystem.openDirectory(name, in: current, path: self.path(name))
        let identity: FileSystem.Identity
        do throws(CLIError) {
            identity = try FileSystem.identity(fd, path: self.path(name))
            if let expected, identity != expected {
                throw CLIError(.io, path(name), "replaced by another directory since it was scanned; not followed")
            }
        } catch {
            close(fd)
            throw error
        }
        levels.append(Level(fd: fd, identity: identity, tag: tag))
        names.append(name)
        // Close the descriptor that left the window (never the top's).
        let leaving = levels.count - 1 - Self.window
        if leaving > 0, levels[leaving].fd >= 0 {
            close(levels[leaving].fd)
            levels[leaving].fd = -1
        }
    }

    /// Leaves the deepest directory (after the caller is done with ``current``).
    ///
    /// - Throws: an I/O ``CLIError`` when the level above had to be opened again and is no longer
    ///   the directory it was (the chain is then left as it is: do not go on with it).
    func leave() throws(CLIError) {
        guard levels.count > 1 else { return }
        let below = levels[levels.count - 1]
        let above = levels.count - 2
        if levels[above].fd < 0 {
            func shown() -> String { ([topPath] + names.dropLast()).joined(separator: "/") }
            let fd = Syscall.retrying { openat(below.fd, "..", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
            guard fd >= 0 else { throw CLIError.system("open", shown(), errno: errno) }
            guard (try? FileSystem.identity(fd, path: shown())) == levels[above].identity else {
                close(fd)
                throw CLIError(.io, shown(), "moved while it was walked; stopped")
            }
            levels[above].fd = fd
        }
        close(below.fd)
        levels.removeLast()
        names.removeLast()
    }

    /// Leaves directories until the deepest is the one tagged `tag` (which must be entered).
    func leave(until tag: Int?) throws(CLIError) {
        while levels.count > 1, currentTag != tag { try leave() }
    }
}
