import Foundation
import TestSupport
import Testing

@testable import RecordStore

/// A database in a fresh directory, without the background thread (tests drive refresh/sync).
func makeDatabase(_ path: String = makeTemporaryDirectory()) throws -> RecordDatabase {
    try RecordDatabase(path: path, backgroundThread: false)
}

/// The directory holding the built products (test bundle and executables).
var productsDirectory: URL {
    let candidates = [Bundle.main.bundleURL, URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()]
    for dir in candidates {
        var url = dir
        for _ in 0..<3 {
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("recordstore-stress").path) { return url }
            url = url.deletingLastPathComponent()
        }
    }
    return URL(fileURLWithPath: ".build/debug")
}

/// Runs a child process and returns it with a pipe on its stdout.
func launch(_ executable: String, _ arguments: [String]) throws -> (Process, Pipe) {
    let process = Process()
    process.executableURL = productsDirectory.appendingPathComponent(executable)
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    return (process, pipe)
}

func note(_ name: String, folder: String?, text: String = "") -> Record {
    var r = Record(recordType: "Note", recordID: RecordID(recordName: name))
    r["title"] = .string(name)
    r["text"] = .string(text)
    if let folder { r["folder"] = .reference(Reference(recordID: RecordID(recordName: folder), action: .deleteSelf)) }
    return r
}

func folder(_ name: String, parent: String? = nil) -> Record {
    var r = Record(recordType: "Folder", recordID: RecordID(recordName: name))
    r["name"] = .string(name)
    if let parent { r["parent"] = .reference(Reference(recordID: RecordID(recordName: parent), action: .deleteSelf)) }
    return r
}
