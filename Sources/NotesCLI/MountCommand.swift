import FUSE
import Foundation
import NotesFS
import RecordStore
import Sync

/// `notesfs [DB] MOUNTPOINT [-f] [-d] [-s] [-o opt,...]`: the mount form.
///
/// libfuse parses the options (`-f` foreground, `-d` debug, `-s` single-threaded, `-o` mount
/// options such as `allow_other`, `ro`, `sync`); DB defaults to the embedded default database.
/// The database and mountpoint are checked before daemonising, so errors reach the terminal.
enum MountCommand {
    static let usage = "usage: notesfs [DB] MOUNTPOINT [-f] [-d] [-s] [-o opt,...]"

    /// Mounts and serves until unmounted or signalled; returns the exit status.
    static func run(_ arguments: [String]) -> Int32 {
        let options: CommandLineOptions
        do { options = try CommandLineOptions.parse(arguments) } catch {
            return fail("\(error)\n\(usage)", status: 2)
        }
        if options.showHelp {
            print(usage)
            print("Mounts the notes database DB (default: \(RecordDatabase.defaultPath)) at MOUNTPOINT.")
            print("A database connected to a server ('notesfs sync init URL') syncs in the background; -o nosync turns that off.\n")
            CommandLineOptions.printLibfuseHelp()
            return 0
        }
        let database: String
        let mountpoint: String
        let explicitDatabase: Bool
        switch options.positionals.count {
        case 1:
            database = RecordDatabase.defaultPath
            mountpoint = options.positionals[0]
            explicitDatabase = false
        case 2:
            database = options.positionals[0]
            mountpoint = options.positionals[1]
            explicitDatabase = true
        default:
            return fail(usage, status: 2)
        }
        let databasePath = absolute(database)
        var isDirectory: ObjCBool = false
        if explicitDatabase, !FileManager.default.fileExists(atPath: databasePath, isDirectory: &isDirectory) || !isDirectory.boolValue {
            // Unlike --db DIR for a command that writes, a mount never creates the directory it is
            // given (a mistyped DB, or an fstab line, must not mount a new empty store): see --help.
            let reason = "no such directory (to mount a new database, create an empty directory first: mkdir \(database))"
            return fail(CLIError.store(.notADatabase(path: databasePath, reason: reason), subject: databasePath))
        }
        do {
            // Create the default database on first use; check the format before anything else.
            try RecordDatabase.validate(path: databasePath, create: !explicitDatabase)
        } catch {
            return fail(CLIError.store(error, subject: databasePath))
        }
        let resolvedMountpoint: String
        do { resolvedMountpoint = try Mountpoint.validate(absolute(mountpoint)) } catch {
            return fail("\(error)", status: ExitStatus.notFound.rawValue)
        }
        MallocSettings.applyForDaemon()
        let fileSystem = NotesFileSystem(
            databasePath: databasePath,
            options: NotesFileSystem.Options(
                synchronous: options.synchronous, noAccessTime: options.noAccessTime, strictAccessTime: options.strictAccessTime,
                noDirectoryAccessTime: options.noDirectoryAccessTime, noLinkRewriting: options.noLinkRewriting))
        var sync: BackgroundSync?
        var trimmer: MemoryTrimmer?
        defer {
            sync?.stop(waitingUpTo: 5)
            trimmer?.stop()
        }
        do {
            // The database is opened in the daemon before the mount: a failure is reported here,
            // with its exit status, and leaves no mount behind.
            let status = try Session.serve(
                fileSystem: fileSystem, mountpoint: resolvedMountpoint, options: options, fsname: databasePath
            ) { () throws(StartupFailure) in
                do throws(RecordStoreError) { try fileSystem.openDatabase() } catch {
                    let failure = CLIError.store(error, subject: databasePath)
                    throw StartupFailure("notesfs: " + failure.line, status: failure.status.rawValue)
                }
                // A database this user may only read: the kernel refuses changes too (and says ro).
                return fileSystem.isReadOnly ? ["ro"] : []
            } serving: {
                sync = MountSync.start(databasePath: databasePath, fileSystem: fileSystem, options: options)
                trimmer = MemoryTrimmer.start()
                SystemdNotify.send("READY=1")  // systemd's Type=notify: mounted and serving
            }
            return status >= 0 ? 0 : ExitStatus.io.rawValue
        } catch let failure as StartupFailure {
            FileHandle.standardError.write(Data((failure.message + "\n").utf8))
            return failure.status
        } catch {
            return fail("\(error)", status: ExitStatus.io.rawValue)
        }
    }

    private static func fail(_ error: CLIError) -> Int32 {
        fail(error.line, status: error.status.rawValue)
    }

    private static func absolute(_ path: String) -> String {
        path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
    }

    private static func fail(_ message: String, status: Int32) -> Int32 {
        FileHandle.standardError.write(Data("notesfs: \(message)\n".utf8))
        return status
    }
}
