/// `FuseArguments`: owns a C `struct fuse_args` built from Swift strings.

import CFuse

/// A `struct fuse_args` whose strings libfuse allocated (`fuse_opt_add_arg`) and frees
/// (`fuse_opt_free_args`). Used within one function; not shared between threads.
final class FuseArguments {
    var arguments = fuse_args(argc: 0, argv: nil, allocated: 0)

    init(_ strings: [String]) {
        for string in strings { _ = fuse_opt_add_arg(&arguments, string) }
    }

    deinit { fuse_opt_free_args(&arguments) }

    /// The current argument strings (libfuse parsing rewrites them).
    var strings: [String] {
        (0..<Int(arguments.argc)).compactMap { index in arguments.argv[index].map { String(cString: $0) } }
    }
}
