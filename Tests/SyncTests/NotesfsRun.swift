import Foundation

/// The built `notesfs` binary (next to the test bundle or in one of its parent directories).
let notesfsBinary: String = {
    var url = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    for _ in 0..<4 {
        let candidate = url.appendingPathComponent("notesfs").path
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        url = url.deletingLastPathComponent()
    }
    return ".build/debug/notesfs"
}()

/// What one run of the binary did.
struct NotesfsRun {
    var status: Int32
    var out: String
    var err: String
}

/// Starts `notesfs --db DB ARGUMENTS…` in its own process and returns at once; its output goes
/// nowhere, its errors to `errors` (a file path) when given.
func startNotesfs(_ db: String, _ arguments: [String], errors: String? = nil) throws -> Process {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: notesfsBinary)
    process.arguments = ["--db", db] + arguments
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    if let errors {
        _ = FileManager.default.createFile(atPath: errors, contents: nil)
        process.standardError = FileHandle(forWritingAtPath: errors)
    }
    try process.run()
    return process
}

/// Runs `notesfs --db DB ARGUMENTS…` to its end, with `stdin` as its input.
@discardableResult
func notesfs(_ db: String, _ arguments: [String], stdin: String? = nil) throws -> NotesfsRun {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: notesfsBinary)
    process.arguments = ["--db", db] + arguments
    let scratch = NSTemporaryDirectory() + "notesfs-sync-run-" + UUID().uuidString
    _ = FileManager.default.createFile(atPath: scratch + ".out", contents: nil)
    _ = FileManager.default.createFile(atPath: scratch + ".err", contents: nil)
    defer { for suffix in [".out", ".err"] { try? FileManager.default.removeItem(atPath: scratch + suffix) } }
    process.standardOutput = FileHandle(forWritingAtPath: scratch + ".out")
    process.standardError = FileHandle(forWritingAtPath: scratch + ".err")
    let input = Pipe()
    process.standardInput = input
    try process.run()
    if let stdin { try input.fileHandleForWriting.write(contentsOf: Data(stdin.utf8)) }
    try input.fileHandleForWriting.close()
    process.waitUntilExit()
    return NotesfsRun(
        status: process.terminationStatus, out: try String(contentsOfFile: scratch + ".out", encoding: .utf8),
        err: try String(contentsOfFile: scratch + ".err", encoding: .utf8))
}

/// Runs a program (`diff -r`, …) to its end; its exit status and standard output.
func runProgram(_ path: String, _ arguments: [String]) throws -> (status: Int32, out: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    let output = NSTemporaryDirectory() + "notesfs-sync-program-" + UUID().uuidString
    _ = FileManager.default.createFile(atPath: output, contents: nil)
    defer { try? FileManager.default.removeItem(atPath: output) }
    process.standardOutput = FileHandle(forWritingAtPath: output)
    process.standardError = FileHandle(forWritingAtPath: output)
    try process.run()
    process.waitUntilExit()
    return (process.terminationStatus, try String(contentsOfFile: output, encoding: .utf8))
}
