/// Tests of command-line parsing through libfuse (no mount needed).

import FUSE
import TestSupport
import Testing

@Suite struct CommandLineTests {
    @Test func foregroundDebugSingleAndOptions() throws {
        let options = try CommandLineOptions.parse(
            ["notesfs", "/db/notes", "/mnt/notes", "-f", "-s", "-o", "allow_other,sync,max_read=65536"])
        #expect(options.positionals == ["/db/notes", "/mnt/notes"])
        #expect(options.foreground)
        #expect(options.singleThread)
        #expect(!options.debug)
        #expect(options.synchronous)
        #expect(options.maxRead == 65536)
        #expect(options.fuseArguments.first == "notesfs")
        #expect(options.fuseArguments.contains { $0.contains("allow_other") })
        #expect(!options.fuseArguments.contains("-f"))
    }

    @Test func debugImpliesForegroundAndIsKeptForLibfuse() throws {
        let options = try CommandLineOptions.parse(["notesfs", "-d", "MNT"])
        #expect(options.debug)
        #expect(options.foreground)
        #expect(options.positionals == ["MNT"])
        #expect(options.fuseArguments.contains("-d"))
    }

    @Test func nosyncIsNotedAndNeverReachesLibfuse() throws {
        let options = try CommandLineOptions.parse(["notesfs", "DB", "MNT", "-o", "nosync,allow_other"])
        #expect(options.noBackgroundSync)
        #expect(!options.synchronous)
        #expect(!options.fuseArguments.joined(separator: " ").contains("nosync"))
        #expect(options.fuseArguments.contains { $0.contains("allow_other") })
        #expect(try !CommandLineOptions.parse(["notesfs", "DB", "MNT"]).noBackgroundSync)
    }

    @Test func noatimeIsNotedAndKeptForTheMountTheLastOfAtimeAndNoatimeWins() throws {
        let options = try CommandLineOptions.parse(["notesfs", "DB", "MNT", "-o", "noatime"])
        #expect(options.noAccessTime)
        #expect(options.fuseArguments.joined(separator: " ").contains("noatime"))
        #expect(try !CommandLineOptions.parse(["notesfs", "DB", "MNT", "-o", "noatime,atime"]).noAccessTime)
        #expect(try !CommandLineOptions.parse(["notesfs", "DB", "MNT"]).noAccessTime)
    }

    @Test func helpAndVersion() throws {
        #expect(try CommandLineOptions.parse(["notesfs", "-h"]).showHelp)
        #expect(try CommandLineOptions.parse(["notesfs", "--version"]).showVersion)
        #expect(CommandLineOptions.libfuseVersion.hasPrefix("3."))
    }

    @Test func missingOptionArgumentIsAnError() {
        #expect(throws: FUSEError.self) { try CommandLineOptions.parse(["notesfs", "MNT", "-o"]) }
    }

    /// mount.fuse3 runs `notesfs DB MNT -o rw,dev,suid,...`; the session must accept what is left.
    @Test func fstabOptionsAreAcceptedBySessionCreation() throws {
        let options = try CommandLineOptions.parse([
            "notesfs", "/var/db/notes.db", "/mnt/notes", "-o",
            "rw,dev,suid,exec,auto,nouser,async,nofail,_netdev,relatime,x-systemd.automount,noatime,sync",
        ])
        #expect(options.positionals == ["/var/db/notes.db", "/mnt/notes"])
        #expect(options.synchronous)
        #expect(!options.readOnly)
        #expect(Set(options.ignoredOptions).isSuperset(of: ["auto", "nouser", "nofail", "_netdev", "x-systemd.automount"]))
        let arguments = options.sessionArguments(fsname: "/var/db/notes,v1.db")
        let joined = arguments.joined(separator: " ")
        #expect(joined.contains("default_permissions"))
        #expect(joined.contains("subtype=notesfs"))
        #expect(joined.contains("fsname=/var/db/notes\\,v1.db"))
        let session = try Session(fileSystem: MemoryFileSystem(), arguments: arguments)
        session.destroy()
    }

    @Test func readOnlyIsNoted() throws {
        let options = try CommandLineOptions.parse(["notesfs", "MNT", "-o", "ro,default_permissions"])
        #expect(options.readOnly)
        #expect(!options.synchronous)
        _ = try Session(fileSystem: MemoryFileSystem(), arguments: options.sessionArguments(fsname: nil))
    }
}

@Suite struct SessionArgumentTests {
    @Test func defaultSubtypeIsReplacedAndUserChoicesKept() throws {
        let plain = try CommandLineOptions.parse(["/usr/bin/other", "MNT"]).sessionArguments(fsname: "db")
        #expect(!plain.contains { $0.hasPrefix("-osubtype=") })
        #expect(plain.suffix(2) == ["-o", "default_permissions,subtype=notesfs,fsname=db"])
        let custom = try CommandLineOptions.parse(["notesfs", "MNT", "-o", "fsname=mine,subtype=x"])
            .sessionArguments(fsname: "db")
        #expect(custom.suffix(2) == ["-o", "default_permissions"])
    }
}

@Suite struct AccessTimeCommandLineTests {
    /// Every standard atime option is accepted (a remount from fstab passes them), the last one wins,
    /// and none that libfuse would refuse reaches it.
    @Test func theAtimeOptionsAreAcceptedAndTheLastWins() throws {
        let options = try CommandLineOptions.parse(
            [
                "notesfs", "db", "mnt", "-o",
                "nodiratime,diratime,nodiratime,strictatime,nostrictatime,relatime,norelatime,lazytime,nosuid,nodev,noexec,rw",
            ])
        #expect(options.noDirectoryAccessTime)
        #expect(options.strictAccessTime)
        #expect(!options.noAccessTime)
        #expect(options.positionals == ["db", "mnt"])
        let joined = options.fuseArguments.joined(separator: " ")
        for dropped in ["diratime", "strictatime", "relatime"] { #expect(!joined.contains(dropped), "\(joined)") }
        #expect(try CommandLineOptions.parse(["notesfs", "db", "mnt", "-o", "strictatime,relatime"]).strictAccessTime == false)
        #expect(try CommandLineOptions.parse(["notesfs", "db", "mnt", "-o", "noatime"]).noAccessTime)
    }
}
