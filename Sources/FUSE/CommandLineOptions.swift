/// `CommandLineOptions`: argv parsed by libfuse (`fuse_opt_parse`, `fuse_parse_cmdline`).
///
/// `notesfs [DB] MOUNTPOINT [-f] [-d] [-s] [-o opt,...]`, and the fstab form that `mount.fuse3`
/// runs: `notesfs DB MOUNTPOINT -o rw,dev,suid,...`. Non-option arguments are collected in order;
/// fstab-only options that `fuse_session_new` would refuse (`auto`, `nofail`, `user`, `defaults`,
/// `x-*`, ...) are dropped; `sync`, `ro`, `max_read=` and the access-time options (`atime`,
/// `noatime`, `relatime`, `norelatime`, `strictatime`, `nostrictatime`, `diratime`, `nodiratime`;
/// the last of them wins) are noted, and kept for the mount where libfuse knows them.

import CFuse
import Glibc

/// The parsed command line.
public struct CommandLineOptions: Hashable, Sendable {
    /// argv[0].
    public var programName: String
    /// Non-option arguments, in order (e.g. `[DB, MOUNTPOINT]`).
    public var positionals: [String]
    /// `-f` (or `-d`): stay in the foreground.
    public var foreground = false
    /// `-d`: libfuse debug output (implies foreground).
    public var debug = false
    /// `-s`: single-threaded loop.
    public var singleThread = false
    /// `-h` / `--help`.
    public var showHelp = false
    /// `-V` / `--version`.
    public var showVersion = false
    /// `-o sync` (the last of `sync`/`async` wins): make every close durable.
    public var synchronous = false
    /// `-o ro`.
    public var readOnly = false
    /// `-o noatime`: reads never move a file's atime.
    public var noAccessTime = false
    /// `-o strictatime` (or `norelatime`): every read moves the atime; else relatime's rule.
    public var strictAccessTime = false
    /// `-o nodiratime`: listing a directory never moves its atime.
    public var noDirectoryAccessTime = false
    /// `-o max_read=N`.
    public var maxRead: UInt32?
    /// `-o nosync`: notesfs's own option (no background sync with the database's server);
    /// dropped before libfuse, which would refuse it.
    public var noBackgroundSync = false
    /// `-o nolinks`: notesfs's own option (renames do not rewrite the links to what they move);
    /// dropped before libfuse. `-o links` turns rewriting back on (the default).
    public var noLinkRewriting = false
    /// Loop settings from `-o clone_fd`, `-o max_idle_threads=`, `-o max_threads=`.
    public var loop = LoopConfiguration()
    /// What remains for `fuse_session_new` (argv[0] first): mount options (`-o ...`), `-d`.
    public var fuseArguments: [String]
    /// fstab-only options that were dropped.
    public var ignoredOptions: [String] = []

    /// Options that only mean something to mount(8)/fstab and that libfuse 3.14 refuses.
    static let fstabOnlyOptions: Set<String> = [
        "defaults", "auto", "noauto", "user", "nouser", "users", "owner", "group", "nofail", "_netdev",
        "lazytime", "nolazytime", "iversion", "noiversion",
        "mand", "nomand", "loud", "silent",
    ]

    static func isFstabOnly(_ option: String) -> Bool {
        fstabOnlyOptions.contains(option) || option.hasPrefix("x-") || option.hasPrefix("comment=")
    }

    /// Parses `argv` (argv[0] included) with libfuse's own parsers.
    /// - Throws: `FUSEError.invalidArguments` when libfuse rejects the command line.
    public static func parse(_ argv: [String]) throws(FUSEError) -> CommandLineOptions {
        let arguments = FuseArguments(argv.isEmpty ? ["notesfs"] : argv)
        let collector = Collector()
        let data = Unmanaged.passUnretained(collector).toOpaque()
        let status = withExtendedLifetime(collector) {
            fuse_opt_parse(&arguments.arguments, data, nil) { data, argument, key, _ in
                CommandLineOptions.Collector.process(data, argument, key)
            }
        }
        guard status == 0 else { throw .invalidArguments("invalid command line: \(argv.dropFirst().joined(separator: " "))") }
        var cmdline = fuse_cmdline_opts()
        guard fuse_parse_cmdline(&arguments.arguments, &cmdline) == 0 else {
            throw .invalidArguments("invalid options: \(argv.dropFirst().joined(separator: " "))")
        }
        free(cmdline.mountpoint)
        var options = CommandLineOptions(
            programName: argv.first ?? "notesfs", positionals: collector.positionals, fuseArguments: arguments.strings)
        options.foreground = cmdline.foreground != 0
        options.debug = cmdline.debug != 0
        options.singleThread = cmdline.singlethread != 0
        options.showHelp = cmdline.show_help != 0
        options.showVersion = cmdline.show_version != 0
        options.synchronous = collector.synchronous
        options.readOnly = collector.readOnly
        options.noAccessTime = collector.noAccessTime
        options.strictAccessTime = collector.strictAccessTime
        options.noDirectoryAccessTime = collector.noDirectoryAccessTime
        options.maxRead = collector.maxRead
        options.noBackgroundSync = collector.noBackgroundSync
        options.noLinkRewriting = collector.noLinkRewriting
        options.ignoredOptions = collector.ignored
        options.loop.cloneFD = cmdline.clone_fd != 0
        if cmdline.max_idle_threads != UInt32.max && cmdline.max_idle_threads != 0 {
            options.loop.maxIdleThreads = cmdline.max_idle_threads
        }
        if cmdline.max_threads != 0 { options.loop.maxThreads = cmdline.max_threads }
        return options
    }

    /// The arguments for `fuse_session_new`: `fuseArguments` plus `default_permissions` (always),
    /// `subtype=` (so `mount` shows `fuse.<subtype>`) and `fsname=` unless given on the command line.
    /// The `-osubtype=<program>` that `fuse_parse_cmdline` adds by default is replaced.
    public func sessionArguments(fsname: String?, subtype: String = "notesfs") -> [String] {
        var result: [String] = []
        var given = Set<String>()
        var arguments = fuseArguments[...]
        while let argument = arguments.popFirst() {
            if argument == "-o", let list = arguments.popFirst() {
                given.formUnion(list.split(separator: ",").map { String($0.prefix { $0 != "=" }) })
                result += [argument, list]
            } else if !argument.hasPrefix("-osubtype=") {
                result.append(argument)
            }
        }
        var extra = ["default_permissions"]
        if !given.contains("subtype") { extra.append("subtype=\(Self.escape(subtype))") }
        if let fsname, !given.contains("fsname") { extra.append("fsname=\(Self.escape(fsname))") }
        result.append("-o")
        result.append(extra.joined(separator: ","))
        return result
    }

    /// Escapes `,` and `\` for a `-o` list (libfuse's option syntax).
    static func escape(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: ",", with: "\\,")
    }

    /// Prints libfuse's help for its options (`fuse_cmdline_help`, `fuse_lowlevel_help`).
    public static func printLibfuseHelp() {
        fuse_cmdline_help()
        fuse_lowlevel_help()
    }

    /// libfuse's version, e.g. "3.14.0" (`fuse_pkgversion`).
    public static var libfuseVersion: String { String(cString: fuse_pkgversion()) }

    /// Gathers what the option processor sees (used only during one `parse`).
    final class Collector {
        var positionals: [String] = []
        var synchronous = false
        var readOnly = false
        var noAccessTime = false
        var strictAccessTime = false
        var noDirectoryAccessTime = false
        var maxRead: UInt32?
        var noBackgroundSync = false
        var noLinkRewriting = false
        var ignored: [String] = []

        /// The `fuse_opt_proc_t`: returns 0 to drop an argument, 1 to keep it.
        static func process(_ data: UnsafeMutableRawPointer?, _ argument: UnsafePointer<CChar>?, _ key: Int32) -> Int32 {
            guard let data, let argument else { return 1 }
            let collector = Unmanaged<Collector>.fromOpaque(data).takeUnretainedValue()
            let text = String(cString: argument)
            if key == FUSE_OPT_KEY_NONOPT {
                collector.positionals.append(text)
                return 0
            }
            switch text {
            case "sync": collector.synchronous = true
            case "async": collector.synchronous = false
            case "ro": collector.readOnly = true
            case "rw": collector.readOnly = false
            case "noatime": collector.noAccessTime = true
            case "atime": collector.noAccessTime = false
            case "relatime", "nostrictatime", "strictatime", "norelatime":
                // The kernel keeps no atime of a FUSE file (the daemon does): noted, not passed on.
                collector.noAccessTime = false
                collector.strictAccessTime = text == "strictatime" || text == "norelatime"
                return 0
            case "diratime", "nodiratime":
                collector.noDirectoryAccessTime = text == "nodiratime"
                return 0
            case "nosync":
                collector.noBackgroundSync = true
                return 0
            case "links", "nolinks":
                collector.noLinkRewriting = text == "nolinks"
                return 0
            case _ where text.hasPrefix("max_read="):
                collector.maxRead = UInt32(text.dropFirst("max_read=".count))
            case _ where isFstabOnly(text):
                collector.ignored.append(text)
                return 0
            default: break
            }
            return 1
        }
    }

    init(programName: String, positionals: [String], fuseArguments: [String]) {
        self.programName = programName
        self.positionals = positionals
        self.fuseArguments = fuseArguments
    }
}
