import Foundation
import TestSupport
import Testing

@Suite struct CommandLineTests {
    @Test func versionAndHelp() throws {
        let version = try notesfs(["--version"], db: nil)
        #expect(version.status == 0)
        #expect(version.out == "notesfs 0.1.0\n")
        let help = try notesfs(["--help"], db: nil)
        #expect(help.status == 0)
        for word in ["folder new", "note edit", "query", "import", "fsck", "Exit status:", "MOUNTPOINT"] {
            #expect(help.out.contains(word), "\(word)")
        }
        for status in 0...6 { #expect(help.out.contains("  \(status)  ")) }
        let commandHelp = try notesfs(["help", "folder", "rm"], db: nil)
        #expect(commandHelp.status == 0)
        #expect(commandHelp.out.hasPrefix("usage: notesfs folder rm PATH [--dry-run]"))
        let optionHelp = try notesfs(["note", "mv", "--help"], db: nil)
        #expect(optionHelp.out.hasPrefix("usage: notesfs note mv SRC DST"))
    }

    @Test func usageErrorsExitWithStatus2() throws {
        let db = makeDatabasePath("usage")
        for arguments in [
            ["ls", "--bogus"], ["folder"], ["folder", "frob"], ["note", "new"], ["query"], ["changes", "--since", "nonsense"],
            ["help", "nope"], [],
        ] {
            let result = try notesfs(arguments, db: arguments.isEmpty ? nil : db)
            #expect(result.status == 2, "\(arguments)")
            #expect(result.stderr.hasPrefix("notesfs: "), "\(arguments)")
            #expect(result.stderr.filter { $0 == "\n" }.count == 1, "one line: \(result.stderr)")
            #expect(result.stdout.isEmpty)
        }
    }

    @Test func theMountFormGoesToTheMountCommand() throws {
        // Not a subcommand: the mount form (built separately) gets the arguments.
        let dir = makeTemporaryDirectory("mountform")
        let result = try notesfs([dir + "/no-db", dir + "/no-mountpoint", "-f"], db: nil)
        #expect(result.status != 0)
        #expect(!result.stderr.contains("unknown command"))
    }

    @Test func missingDatabaseIsStatus6AndNotCreated() throws {
        let db = makeDatabasePath("missing")
        let result = try notesfs(["ls"], db: db)
        #expect(result.status == 6)
        #expect(result.stderr == "notesfs: \(db): not a notesfs database: no such directory\n")
        #expect(!FileManager.default.fileExists(atPath: db))
    }
}
