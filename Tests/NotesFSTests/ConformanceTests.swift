/// The POSIX conformance suite (`Tests/Conformance/posix.py`): every node type × create, stat,
/// chmod, chown, rename, unlink, link, utimensat; rename over every pair of types; permissions as
/// root and as another uid; sticky directories; the time and link-count rules. It runs on tmpfs and
/// on a notesfs mount in the same test run. tmpfs must say what the suite's EXPECTED table pins (so
/// the suite is checked against a real kernel filesystem), and notesfs must agree with tmpfs case by
/// case, except for the cases listed in `Tests/Conformance/known-differences.txt`: what the mount has
/// still to build. That list is exact: a listed case that now agrees fails the test too, so the list
/// only shrinks as the mount gains what the cases check. A notesfs tree also reads back the same
/// after a remount, `st_blocks` included (what is stored does not change with a remount).

import Foundation
import Glibc
import TestSupport
import Testing

private let conformanceDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("Conformance").path

private struct SuiteRun: Decodable {
    var results: [String: JSONValue]
    var unexpected: [String]
}

/// Any JSON value, compared structurally.
private indirect enum JSONValue: Decodable, Equatable, CustomStringConvertible {
    case null, bool(Bool), number(Double), string(String), array([JSONValue]), object([String: JSONValue])

    init(from decoder: Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() {
            self = .null
        } else if let v = try? c.decode(Bool.self) {
            self = .bool(v)
        } else if let v = try? c.decode(Double.self) {
            self = .number(v)
        } else if let v = try? c.decode(String.self) {
            self = .string(v)
        } else if let v = try? c.decode([JSONValue].self) {
            self = .array(v)
        } else {
            self = .object(try c.decode([String: JSONValue].self))
        }
    }

    var description: String {
        switch self {
        case .null: "null"
        case .bool(let v): "\(v)"
        case .number(let v): "\(v)"
        case .string(let v): "\"\(v)\""
        case .array(let v): "[" + v.map(\.description).joined(separator: ", ") + "]"
        case .object(let v): "{" + v.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "}"
        }
    }
}

private func runSuite(_ command: String, _ root: String, _ options: [String] = []) throws -> ProgramResult {
    try run(["/usr/bin/python3", conformanceDirectory + "/posix.py", command, root] + options, timeout: 600)
}

@Suite(.tags(.mount), .needsFUSE) struct ConformanceTests {
    @Test func notesfsAgreesWithTmpfsCaseByCase() throws {
        // tmpfs: the reference.
        let reference = try withTmpfs("conformance-tmpfs", options: "size=64m,mode=0755") { tmpfs in try runSuite("run", tmpfs) }
        try #require(reference.status == 0, "the suite failed on tmpfs: \(reference.stderr)")
        let expected = try JSONDecoder().decode(SuiteRun.self, from: Data(reference.out.utf8))
        #expect(expected.unexpected.isEmpty, "tmpfs contradicts the suite's EXPECTED table: \(expected.unexpected)")
        #expect(expected.results.count > 150)

        let known = Set(
            try String(contentsOfFile: conformanceDirectory + "/known-differences.txt", encoding: .utf8)
                .split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { !$0.isEmpty && !$0.hasPrefix("#") })
        try withDatabaseDirectory { db in
            var before = ""
            try withNotesMount(databasePath: db, mountOptions: ["allow_other"], timeout: 600) { m in
                let result = try runSuite("run", m.root)
                try #require(result.status == 0, "the suite failed on notesfs: \(result.stderr)")
                let actual = try JSONDecoder().decode(SuiteRun.self, from: Data(result.out.utf8))
                var agreeing = 0
                for (name, want) in expected.results.sorted(by: { $0.key < $1.key }) {
                    let got = actual.results[name] ?? .null
                    if known.contains(name) {
                        #expect(got != want, "\(name) now agrees with tmpfs: remove it from known-differences.txt")
                    } else {
                        #expect(got == want, "\(name): tmpfs \(want), notesfs \(got)")
                        if got == want { agreeing += 1 }
                    }
                }
                #expect(known.isSubset(of: Set(expected.results.keys)), "unknown cases listed: \(known.subtracting(expected.results.keys))")
                print(
                    "conformance: notesfs agrees with tmpfs on \(agreeing) of \(expected.results.count) cases (\(known.count) known differences)"
                )
                let dump = try runSuite("dump", m.root, ["--blocks"])
                try #require(dump.status == 0, "\(dump.stderr)")
                before = dump.out
            }
            try withNotesMount(databasePath: db, mountOptions: ["allow_other"], timeout: 600) { m in
                let after = try runSuite("dump", m.root, ["--blocks"])
                #expect(after.status == 0, "\(after.stderr)")
                #expect(after.out == before, "the tree differs after a remount")
            }
        }
    }
}
