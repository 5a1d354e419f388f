import Foundation

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// The user's text editor: `$VISUAL`, else `$EDITOR`, else `vi`, run through `/bin/sh -c` as git does.
enum Editor {
    /// The editor command line from the environment.
    static var command: String {
        let environment = ProcessInfo.processInfo.environment
        return [environment["VISUAL"], environment["EDITOR"]].compactMap { $0 }.first { !$0.isEmpty } ?? "vi"
    }

    /// Runs the editor on `file` and waits for it; returns its exit status.
    ///
    /// While it runs, SIGINT and SIGQUIT are ignored here (the editor gets them from the terminal:
    /// a Ctrl-C in vi must not kill notesfs and lose the edit), as git does.
    /// - Throws: an I/O ``CLIError`` when the editor cannot be started.
    static func edit(_ file: String) throws(CLIError) -> Int32 {
        let editor = command
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", editor + " \"$@\"", editor, file]
        do { try process.run() } catch { throw CLIError(.io, editor, "cannot run the editor: \(error)") }
        let previousInterrupt = signal(SIGINT, SIG_IGN)
        let previousQuit = signal(SIGQUIT, SIG_IGN)
        process.waitUntilExit()
        signal(SIGINT, previousInterrupt)
        signal(SIGQUIT, previousQuit)
        return process.terminationReason == .exit ? process.terminationStatus : 128 + process.terminationStatus
    }
}
