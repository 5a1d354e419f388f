/// The built `notesfs` binary, run as a user runs it: `notesfs --db DB COMMAND…`.

import Foundation

/// The `notesfs` executable next to the test bundle (or in one of its parent directories);
/// `.build/debug/notesfs` when none is found.
public let notesfsBinary: String = {
    for start in [CommandLine.arguments.first, Bundle.main.executablePath].compactMap({ $0 }) {
        var directory = URL(fileURLWithPath: start).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("notesfs").path
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: candidate, isDirectory: &isDirectory), !isDirectory.boolValue,
                FileManager.default.isExecutableFile(atPath: candidate)
            {
                return candidate
            }
            directory = directory.deletingLastPathComponent()
        }
    }
    return ".build/debug/notesfs"
}()

/// Runs `notesfs --db DB ARGUMENTS…` (no `--db` when `db` is nil) to its end.
@discardableResult
public func notesfs(_ arguments: [String], db: String?, stdin: Data? = nil, environment: [String: String] = [:]) throws -> ProgramResult {
    try run([notesfsBinary] + (db.map { ["--db", $0] } ?? []) + arguments, stdin: stdin, environment: environment)
}

/// Runs `notesfs --db DB ARGUMENTS…` to its end, with `stdin` as its input.
@discardableResult
public func notesfs(_ db: String, _ arguments: [String], stdin: String? = nil) throws -> ProgramResult {
    try notesfs(arguments, db: db, stdin: stdin.map { Data($0.utf8) })
}

/// Starts `notesfs --db DB ARGUMENTS…` in its own process and returns at once; its output goes
/// nowhere, its errors to `errors` (a file path) when given.
public func startNotesfs(_ db: String, _ arguments: [String], errors: String? = nil) throws -> Process {
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
