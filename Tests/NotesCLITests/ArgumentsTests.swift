import TestSupport
import Testing

@testable import NotesCLI

@Suite struct ArgumentsTests {
    static let options = [OptionSpec("--parent", value: true), OptionSpec("--long", "-l"), OptionSpec("--limit", value: true)]

    @Test func positionalsFlagsAndValues() throws {
        let parsed = try Arguments(parsing: ["a", "--parent", "Work", "-l", "--limit=5", "-qv", "--", "-x"], options: Self.options)
        #expect(parsed.positionals == ["a", "-x"])
        #expect(parsed.value("--parent") == "Work")
        #expect(parsed.value("--limit") == "5")
        #expect(parsed.flags == ["--long", "--quiet", "--verbose"])
    }

    @Test func aValueMayLookLikeAnOption() throws {
        let parsed = try Arguments(parsing: ["--parent", "-modificationDate", "-"], options: Self.options)
        #expect(parsed.value("--parent") == "-modificationDate")
        #expect(parsed.positionals == ["-"])
    }

    @Test(arguments: [["--bogus"], ["--parent"], ["--long=3"], ["-lz"], ["-qp"]])
    func badOptionsAreUsageErrors(_ arguments: [String]) {
        #expect(throws: CLIError.self) { try Arguments(parsing: arguments, options: Self.options) }
        do { _ = try Arguments(parsing: arguments, options: Self.options) } catch { #expect(error.status == .usage) }
    }

    @Test func positionalCountIsChecked() throws {
        let parsed = try Arguments(parsing: ["a", "b"], options: [])
        #expect(throws: CLIError.self) { try parsed.positionals(min: 0, max: 1, command: "ls") }
        #expect(throws: CLIError.self) { try parsed.positionals(min: 3, max: 3, command: "ls") }
        #expect(try parsed.positionals(min: 2, max: 2, command: "x") == ["a", "b"])
    }

    @Test func subcommandFormIsRecognised() {
        for first in ["ls", "folder", "note", "help", "--db", "--db=/x", "--json", "-q", "-qv", "--version", "--help"] {
            #expect(NotesCLI.isSubcommandForm(first), "\(first)")
        }
        for first in ["/mnt/notes", "db", "-f", "-o", "mnt"] {
            #expect(!NotesCLI.isSubcommandForm(first), "\(first)")
        }
    }
}
