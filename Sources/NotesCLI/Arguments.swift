/// One option a command accepts: its spellings and whether it takes a value.
struct OptionSpec: Sendable {
    /// The canonical name (`--db`), used as the key in ``Arguments``.
    var name: String
    /// Other spellings (`-q`).
    var aliases: [String] = []
    var takesValue: Bool = false

    init(_ name: String, _ aliases: String..., value: Bool = false) {
        self.name = name
        self.aliases = aliases
        self.takesValue = value
    }

    func matches(_ spelling: String) -> Bool { spelling == name || aliases.contains(spelling) }
}

/// A parsed command line: positional arguments, flags and option values.
///
/// Accepts `--name value`, `--name=value`, `-n value`, bundled short flags (`-qv`), and `--` to end
/// options; a lone `-` is a positional argument.
struct Arguments: Sendable {
    var positionals: [String] = []
    var flags: Set<String> = []
    var values: [String: String] = [:]

    /// Options every command accepts.
    static let globalOptions: [OptionSpec] = [
        OptionSpec("--db", value: true), OptionSpec("--json"), OptionSpec("--quiet", "-q"),
        OptionSpec("--verbose", "-v"), OptionSpec("--help", "-h"), OptionSpec("--version"),
    ]

    /// Parses `arguments` against `options` plus the global options.
    ///
    /// - Throws: a usage ``CLIError`` for an unknown option or a missing value.
    init(parsing arguments: [String], options: [OptionSpec], command: String? = nil) throws(CLIError) {
        let specs = options + Self.globalOptions
        func spec(_ spelling: String) throws(CLIError) -> OptionSpec {
            guard let spec = specs.first(where: { $0.matches(spelling) }) else {
                throw CLIError.usage("unknown option \(spelling)", command: command)
            }
            return spec
        }
        var index = 0
        var optionsEnded = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if optionsEnded || argument == "-" || !argument.hasPrefix("-") {
                positionals.append(argument)
                continue
            }
            if argument == "--" {
                optionsEnded = true
                continue
            }
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                let found = try spec(String(argument[..<equals]))
                guard found.takesValue else { throw CLIError.usage("option \(found.name) takes no value", command: command) }
                values[found.name] = String(argument[argument.index(after: equals)...])
                continue
            }
            if !argument.hasPrefix("--"), argument.count > 2 {
                // Bundled short flags: -qv.
                for letter in argument.dropFirst() where !specs.contains(where: { $0.matches("-" + String(letter)) }) {
                    throw CLIError.usage(
                        "unknown option -\(letter) in \(argument); an argument that starts with '-' goes after '--' "
                            + "(notesfs \(command.map { $0 + " " } ?? "")-- \(argument))", command: command)
                }
                for letter in argument.dropFirst() {
                    let found = try spec("-" + String(letter))
                    guard !found.takesValue else {
                        throw CLIError.usage("option -\(letter) needs a value and cannot be bundled", command: command)
                    }
                    flags.insert(found.name)
                }
                continue
            }
            let found = try spec(argument)
            if found.takesValue {
                guard index < arguments.count else { throw CLIError.usage("option \(argument) needs a value", command: command) }
                values[found.name] = arguments[index]
                index += 1
            } else {
                flags.insert(found.name)
            }
        }
    }

    init() {}

    func has(_ flag: String) -> Bool { flags.contains(flag) }

    func value(_ option: String) -> String? { values[option] }

    /// The positionals, checked against the number a command expects.
    ///
    /// - Throws: a usage ``CLIError`` when there are fewer than `min` or more than `max`.
    func positionals(min: Int, max: Int, command: String) throws(CLIError) -> [String] {
        if positionals.count < min {
            throw CLIError.usage("missing argument", command: command)
        }
        if positionals.count > max {
            throw CLIError.usage("unexpected argument '\(positionals[max])'", command: command)
        }
        return positionals
    }

    /// An integer option value.
    ///
    /// - Throws: a usage ``CLIError`` when it is not a non-negative integer.
    func integer(_ option: String, command: String) throws(CLIError) -> Int? {
        guard let text = values[option] else { return nil }
        guard let number = Int(text), number >= 0 else {
            throw CLIError.usage("option \(option) needs a non-negative integer, not '\(text)'", command: command)
        }
        return number
    }
}
