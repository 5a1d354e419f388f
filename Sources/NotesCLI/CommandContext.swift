import Foundation
import Notes
import RecordStore

/// What a running subcommand gets: its parsed arguments, its output and the database location.
struct CommandContext {
    /// The command as typed (`folder rm`), for error messages.
    let command: String
    let arguments: Arguments
    let output: Output
    let databasePath: String
    /// The command's synopsis (`note mv SRC DST`), to name a missing argument.
    var synopsis: String = ""

    /// Opens the database (without a background thread: the CLI is short-lived and syncs at the
    /// end), with note history on (``VersionHistory/install(on:settings:)``).
    ///
    /// - Throws: a ``CLIError`` mapped from the store (missing or foreign directory, newer format, I/O).
    func openDatabase(create: Bool = false) throws(CLIError) -> RecordDatabase {
        let database: RecordDatabase
        do { database = try RecordDatabase(path: databasePath, create: create, backgroundThread: false) } catch {
            throw CLIError.store(error, subject: databasePath)
        }
        VersionHistory.install(on: database)
        return database
    }

    /// Makes every change durable before the process exits.
    func finish(_ database: RecordDatabase) throws(CLIError) {
        do { try database.close() } catch { throw CLIError.store(error, subject: databasePath) }
    }

    func positionals(min: Int, max: Int) throws(CLIError) -> [String] {
        if arguments.positionals.count < min, arguments.positionals.count < requiredNames.count {
            throw CLIError.usage("missing \(requiredNames[arguments.positionals.count])", command: command)
        }
        return try arguments.positionals(min: min, max: max, command: command)
    }

    /// The required positional arguments named in the synopsis (`SRC`, `DST`).
    var requiredNames: [String] {
        let words = synopsis.split(separator: " ").dropFirst(command.split(separator: " ").count)
        return words.filter { word in (word.first.map { $0.isUppercase } ?? false) && !word.hasSuffix("]") }.map(String.init)
    }
}

/// A subcommand: its name, options, help text and body.
struct CommandSpec: Sendable {
    /// `ls`, or `folder rm` for an action of a command group.
    var name: String
    /// One line: `folder rm PATH [--dry-run]`.
    var synopsis: String
    var summary: String
    /// Extra help lines (options, notes).
    var help: String = ""
    var options: [OptionSpec] = []
    /// Whether the command writes (opens the database creating it when absent).
    var writes = false
    var run: @Sendable (CommandContext) throws(CLIError) -> Void
}
