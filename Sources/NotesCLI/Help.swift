import RecordStore

/// The help texts: `notesfs --help`, `notesfs help COMMAND`, `notesfs COMMAND --help`.
enum Help {
    static let usageLines = """
        usage: notesfs [DB] MOUNTPOINT [-f] [-d] [-s] [-o opt,...]
               notesfs [--db DIR] [--json] [-q|-v] COMMAND [ARGS...]
        """

    static var general: String {
        var text =
            usageLines
            + "\n\nA notes store: folders of markdown notes in a record database, mounted with FUSE\nor used with these commands (also while it is mounted).\n\nCommands:\n"
        let width = CommandTable.all.map(\.synopsis.count).max() ?? 0
        for spec in CommandTable.all {
            text += "  " + spec.synopsis.padding(toLength: width + 2, withPad: " ", startingAt: 0) + spec.summary + "\n"
        }
        text += "  " + "help [COMMAND]".padding(toLength: width + 2, withPad: " ", startingAt: 0) + "show help for a command\n"
        text += "\nA database is created where it is missing by a command that writes (folder new, note new,\n"
        text += "import) and by a mount of the default one. A DB given to the mount must exist, so that a\n"
        text += "mistyped path fails instead of mounting a new, empty store: an empty directory becomes a\n"
        text += "new database. Commands that only read never create the directory.\n"
        text += "\nPaths name folders from the root, then a note (with or without .md) or an attachment:\n"
        text += "Work/Projects/Plan. Names are shown as in the mount (see notesfs(1), NAMES).\n"
        text += "\n" + globalOptions + "\n\n" + exitStatus
        return text
    }

    static let globalOptions = """
        Options (every command):
          --db DIR        database directory (default: $XDG_DATA_HOME/notesfs,
                          else ~/.local/share/notesfs)
          --json          machine-readable JSON output for listings
          -q, --quiet     print only results and errors
          -v, --verbose   print details (each record removed, files skipped)
          -h, --help      show help
          --version       print the version
        """

    static var exitStatus: String {
        "Exit status:\n" + ExitStatus.allCases.map { "  \($0.rawValue)  \($0.summary)" }.joined(separator: "\n")
    }

    static func actions(of group: String) -> String {
        CommandTable.all.filter { $0.name.hasPrefix(group + " ") }.map { String($0.name.dropFirst(group.count + 1)) }.joined(
            separator: ", ")
    }

    /// Help for a command, a command group, or everything (empty topic).
    ///
    /// - Throws: a usage ``CLIError`` for an unknown topic.
    static func text(for topic: String) throws(CLIError) -> String {
        if topic.isEmpty || topic == "help" { return general }
        if let spec = CommandTable.spec(named: topic) {
            var text = "usage: notesfs " + spec.synopsis + "\n\n" + spec.summary + ".\n"
            if !spec.help.isEmpty { text += "\n" + spec.help + "\n" }
            return text + "\n" + globalOptions + "\n\n" + exitStatus
        }
        let members = CommandTable.all.filter { $0.name.hasPrefix(topic + " ") }
        guard !members.isEmpty else { throw CLIError.usage("no help for '\(topic)': unknown command") }
        let width = members.map(\.synopsis.count).max() ?? 0
        return "usage:\n"
            + members.map { "  notesfs " + $0.synopsis.padding(toLength: width + 2, withPad: " ", startingAt: 0) + $0.summary }.joined(
                separator: "\n")
            + "\n\nSee 'notesfs \(topic) ACTION --help'."
    }
}
