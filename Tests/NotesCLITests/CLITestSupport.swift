import Foundation
import Testing

#if canImport(Glibc)
@preconcurrency import Glibc
#endif

/// A fresh temporary directory for one test (tests run in parallel).
func makeTemporaryDirectory(_ label: String = "cli", base: String = "/tmp") -> String {
    var template = Array("\(base)/notesfs-cli-\(label)-XXXXXX".utf8CString)
    return template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
}

/// The built `notesfs` executable: next to the test bundle, or in one of its parent directories.
let notesfsBinary: String = {
    let candidates = [Bundle.main.bundleURL, URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()]
    for dir in candidates {
        var url = dir
        for _ in 0..<4 {
            let binary = url.appendingPathComponent("notesfs")
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: binary.path, isDirectory: &isDirectory), !isDirectory.boolValue { return binary.path }
            url = url.deletingLastPathComponent()
        }
    }
    return ".build/debug/notesfs"
}()

/// What one run of the binary did.
struct RunResult {
    var status: Int32
    var stdout: Data
    var stderr: String
    var out: String { String(decoding: stdout, as: UTF8.self) }
    var lines: [String] { out.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init) }
}

/// Runs `notesfs --db DB ARGS...` (no `--db` when `db` is nil) and collects its output and status.
///
/// stdout and stderr go to files, so a large output never blocks the child.
@discardableResult
func notesfs(_ arguments: [String], db: String?, stdin: Data? = nil, environment: [String: String] = [:]) throws -> RunResult {
    try run(notesfsBinary, (db.map { ["--db", $0] } ?? []) + arguments, stdin: stdin, environment: environment)
}

func run(_ executable: String, _ arguments: [String], stdin: Data? = nil, environment: [String: String] = [:]) throws -> RunResult {
    let scratch = makeTemporaryDirectory("run")
    defer { try? FileManager.default.removeItem(atPath: scratch) }
    let outPath = scratch + "/stdout"
    let errPath = scratch + "/stderr"
    _ = FileManager.default.createFile(atPath: outPath, contents: nil)
    _ = FileManager.default.createFile(atPath: errPath, contents: nil)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    var env = ProcessInfo.processInfo.environment
    env.merge(environment) { _, new in new }
    process.environment = env
    let out = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
    let err = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
    process.standardOutput = out
    process.standardError = err
    let input = Pipe()
    process.standardInput = input
    try process.run()
    if let stdin { try input.fileHandleForWriting.write(contentsOf: stdin) }
    try input.fileHandleForWriting.close()
    process.waitUntilExit()
    try out.close()
    try err.close()
    let stdout = try Data(contentsOf: URL(fileURLWithPath: outPath))
    let stderr = String(decoding: try Data(contentsOf: URL(fileURLWithPath: errPath)), as: UTF8.self)
    return RunResult(status: process.terminationStatus, stdout: stdout, stderr: stderr)
}

/// A database directory for one test (created by the first command that writes).
func makeDatabasePath(_ label: String) -> String { makeTemporaryDirectory(label) + "/db" }

/// Parses `--json` output.
func parseJSON(_ data: Data) throws -> Any { try JSONSerialization.jsonObject(with: data) }
