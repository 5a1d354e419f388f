import Foundation
import POSIX

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Where a command writes: results on stdout (text or JSON), messages on stderr, by verbosity.
struct Output: Sendable {
    /// `--json`: listings print one JSON document instead of text lines.
    var json = false
    /// `-q`: only results and errors.
    var quiet = false
    /// `-v`: also details (skipped files, each removed record).
    var verbose = false

    /// Writes text lines to stdout, each ending in a newline.
    func lines(_ lines: [String]) {
        guard !lines.isEmpty else { return }
        write(lines.joined(separator: "\n") + "\n", to: STDOUT_FILENO)
    }

    func line(_ text: String) { lines([text]) }

    /// Writes bytes to stdout unchanged (`note cat`).
    func raw(_ data: Data) { data.withUnsafeBytes { write($0, to: STDOUT_FILENO) } }

    /// Writes a JSON document to stdout.
    func json(_ value: JSONValue) { line(value.rendered()) }

    /// A message on stderr, unless `-q`.
    func info(_ text: String) {
        guard !quiet else { return }
        write("notesfs: " + text + "\n", to: STDERR_FILENO)
    }

    /// A message on stderr, only with `-v`.
    func detail(_ text: String) {
        guard verbose else { return }
        write("notesfs: " + text + "\n", to: STDERR_FILENO)
    }

    /// An error line on stderr (always): `notesfs: <subject>: <message>`, then its detail lines.
    func error(_ error: CLIError) {
        guard !error.message.isEmpty else { return }  // a status alone (search: nothing matched)
        var text = "notesfs: " + error.line + "\n"
        for detail in error.details { text += detail + "\n" }
        write(text, to: STDERR_FILENO)
    }

    private func write(_ text: String, to fd: Int32) {
        var text = text
        text.withUTF8 { write(UnsafeRawBufferPointer($0), to: fd) }
    }

    /// Writes all of `bytes` (``POSIX/Syscall/writeAll(_:_:at:path:)``). Straight to the
    /// descriptor, not through Foundation's `FileHandle`, whose first use was 0.1-0.2 ms of every
    /// command's start (`perf record` of `notesfs --version`). A failure ends the write silently:
    /// stdout closed (a pipe into `head`) leaves nothing useful to say.
    private func write(_ bytes: UnsafeRawBufferPointer, to fd: Int32) {
        try? Syscall.writeAll(fd, bytes, path: "output")
    }
}

/// A JSON value with ordered object keys, for `--json` output.
enum JSONValue: Sendable, Equatable {
    case string(String)
    case int(Int64)
    case double(Double)
    case bool(Bool)
    case null
    case array([JSONValue])
    case object([(String, JSONValue)])

    static func == (a: JSONValue, b: JSONValue) -> Bool { a.rendered() == b.rendered() }

    /// Pretty-printed text (two-space indent).
    func rendered(indent: String = "") -> String {
        let inner = indent + "  "
        switch self {
        case .string(let s): return Self.quoted(s)
        case .int(let n): return String(n)
        case .double(let d): return d.isFinite ? "\(d)" : "null"
        case .bool(let b): return b ? "true" : "false"
        case .null: return "null"
        case .array(let items):
            if items.isEmpty { return "[]" }
            return "[\n" + items.map { inner + $0.rendered(indent: inner) }.joined(separator: ",\n") + "\n" + indent + "]"
        case .object(let members):
            if members.isEmpty { return "{}" }
            return "{\n" + members.map { inner + Self.quoted($0.0) + ": " + $0.1.rendered(indent: inner) }.joined(separator: ",\n") + "\n"
                + indent + "}"
        }
    }

    static func quoted(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F || scalar == "\u{2028}" || scalar == "\u{2029}":
                out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
