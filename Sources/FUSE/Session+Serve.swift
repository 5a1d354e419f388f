/// `Session.serve`: the daemon's whole life: mount, daemonise, loop until unmount or signal, clean up.

import CFuse
import Glibc

extension Session {
    /// Mounts `fileSystem` at `mountpoint` and serves it until unmounted or signalled.
    ///
    /// Order (as libfuse's examples): `fuse_session_new` (with `default_permissions`,
    /// `subtype=notesfs`, `fsname=`), `fuse_set_signal_handlers`, `fuse_session_mount`,
    /// `fuse_daemonize` (unless `-f`; logging then goes to syslog; the working directory becomes
    /// `/`, so pass absolute paths), the loop, then the filesystem's `destroy` (make everything
    /// durable) before `fuse_session_unmount` and `fuse_session_destroy`.
    /// - Returns: the loop's result: 0 after an unmount, the signal number after SIGTERM/SIGINT/SIGHUP
    ///   (both clean exits), or a negative errno.
    /// - Throws: `FUSEError` when the session cannot be set up or mounted.
    public static func serve(
        fileSystem: any FileSystem, mountpoint: String, options: CommandLineOptions, fsname: String?,
        subtype: String = "notesfs"
    ) throws(FUSEError) -> Int32 {
        let session = try Session(
            fileSystem: fileSystem, arguments: options.sessionArguments(fsname: fsname, subtype: subtype),
            maxRead: options.maxRead)
        try session.setSignalHandlers()
        do {
            try session.mount(at: mountpoint)
        } catch {
            session.removeSignalHandlers()
            throw error
        }
        if options.debug { Log.setMinimumLevel(.debug) }
        guard fuse_daemonize(options.foreground ? 1 : 0) == 0 else {
            session.removeSignalHandlers()
            session.unmount()
            session.destroy()
            throw .daemonizeFailed
        }
        if !options.foreground { Log.useSyslog(identifier: subtype) }
        Log.info("serving \(fsname ?? subtype) at \(session.mountpoint ?? mountpoint)")
        let status = session.loop(singleThread: options.singleThread, configuration: options.loop)
        Log.info("session ended (\(status > 0 ? "signal \(status)" : "status \(status)")); flushing")
        session.finishFileSystem()
        session.removeSignalHandlers()
        session.unmount()
        session.destroy()
        return status
    }
}
