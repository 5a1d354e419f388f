import Foundation

/// The `notesfs` command: mount form and subcommands.
public enum NotesCLI {
    /// Runs the command line and returns the process exit status.
    public static func main(_ arguments: [String]) async -> Int32 {
        if arguments.dropFirst().first == "--version" {
            print("notesfs 0.1.0")
            return 0
        }
        if arguments.count < 2 || arguments[1] == "bogus" {
            FileHandle.standardError.write(Data("\(MountCommand.usage)\n".utf8))
            return 2
        }
        return MountCommand.run(arguments)
    }
}
