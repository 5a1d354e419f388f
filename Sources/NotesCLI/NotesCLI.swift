import Foundation
import RecordStore

/// The `notesfs` command: mount form and subcommands.
public enum NotesCLI {
    public static let version = "0.1.0"

    /// Runs the command line and returns the process exit status.
    ///
    /// When `arguments[1]` is neither a subcommand nor a global option, this is the mount form
    /// (`notesfs [DB] MOUNTPOINT ...`) and ``MountCommand`` runs it.
    ///
    /// Synchronous on purpose: the mount form's request loop must run on the process's main thread.
    /// Linux delivers SIGTERM/SIGINT to the main thread when it can take it, and libfuse's loop only
    /// notices the exit flag its handler sets when its own thread is interrupted; a loop on another
    /// thread (an `async` main runs on the cooperative pool) slept on until the next request.
    public static func main(_ arguments: [String]) -> Int32 {
        let rest = Array(arguments.dropFirst())
        if let first = rest.first, !isSubcommandForm(first) {
            return MountCommand.run(Array(arguments))
        }
        var output = Output()
        do {
            return try run(rest, output: &output).rawValue
        } catch {
            output.error(error)
            return error.status.rawValue
        }
    }

    /// Whether a first argument starts the subcommand form.
    static func isSubcommandForm(_ first: String) -> Bool {
        if CommandTable.words.contains(first) { return true }
        let spelling = first.hasPrefix("--") ? String(first.prefix(while: { $0 != "=" })) : first
        if Arguments.globalOptions.contains(where: { $0.matches(spelling) }) { return true }
        // Bundled global short flags (-qv).
        if first.hasPrefix("-"), !first.hasPrefix("--"), first.count > 2 {
            return first.dropFirst().allSatisfy { letter in Arguments.globalOptions.contains { $0.matches("-" + String(letter)) } }
        }
        return false
    }

    static func run(_ arguments: [String], output: inout Output) throws(CLIError) -> ExitStatus {
        // Global options before the command word.
        var index = 0
        while index < arguments.count, arguments[index].hasPrefix("-"), arguments[index] != "-" {
            index += 1
            if arguments[index - 1] == "--db" { index += 1 }
        }
        let leading = try Arguments(parsing: Array(arguments[..<min(index, arguments.count)]), options: [])
        apply(leading, to: &output)
        guard index < arguments.count else {
            if leading.has("--version") {
                output.line("notesfs \(version)")
                return .success
            }
            if leading.has("--help") {
                output.line(Help.general)
                return .success
            }
            throw CLIError.usage("a command or a mount point is needed")
        }
        var word = arguments[index]
        var remaining = Array(arguments[(index + 1)...])
        if word == "help" {
            let topic = remaining.filter { !$0.hasPrefix("-") }.joined(separator: " ")
            output.line(try Help.text(for: topic))
            return .success
        }
        if CommandTable.groups.contains(word) {
            guard let action = remaining.first, !action.hasPrefix("-") else {
                if remaining.contains(where: { $0 == "--help" || $0 == "-h" }) || leading.has("--help") {
                    output.line(try Help.text(for: word))
                    return .success
                }
                throw CLIError.usage("an action is needed: " + Help.actions(of: word), command: word)
            }
            word += " " + action
            remaining.removeFirst()
        }
        guard let spec = CommandTable.spec(named: word) else {
            throw CLIError.usage("unknown command '\(word)'")
        }
        let parsed = try Arguments(parsing: remaining, options: spec.options, command: word)
        if parsed.has("--help") || leading.has("--help") {
            output.line(try Help.text(for: word))
            return .success
        }
        if parsed.has("--version") || leading.has("--version") {
            output.line("notesfs \(version)")
            return .success
        }
        var merged = parsed
        merged.flags.formUnion(leading.flags)
        merged.values.merge(leading.values) { mine, _ in mine }
        apply(merged, to: &output)
        let context = CommandContext(
            command: word, arguments: merged, output: output, databasePath: merged.value("--db") ?? RecordDatabase.defaultPath,
            synopsis: spec.synopsis)
        try spec.run(context)
        return .success
    }

    static func apply(_ arguments: Arguments, to output: inout Output) {
        output.json = arguments.has("--json")
        output.quiet = arguments.has("--quiet")
        output.verbose = arguments.has("--verbose") && !output.quiet
    }
}
