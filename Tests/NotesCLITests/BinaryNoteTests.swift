import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Notes whose bytes are not UTF-8 text of at most 8 MiB (kept as their `content` asset): the CLI
/// imports, prints, exports, lists and edits them byte for byte, and the mount shows the same bytes.
@Suite struct BinaryNoteTests {
    /// The bytes of one kind of note that is not inline text.
    static func sample(_ kind: String) -> [UInt8] {
        switch kind {
        case "latin1":
            return Array("caf".utf8) + [0xE9] + Array(" cr".utf8) + [0xE8, 0x6D, 0x65, 0x20, 0xFC, 0x62, 0x65, 0x72, 0x0A]
        case "utf16":
            // UTF-16LE with its byte order mark.
            return [0xFF, 0xFE] + "# Über notes ✓\r\nline two\r\n".utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        case "random":
            var state: UInt64 = 0x1234_5678
            return (0..<300_000).map { _ in
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                return UInt8(truncatingIfNeeded: state >> 33)
            }
        default:
            // "big": 9 MiB of valid UTF-8, over the 8 MiB inline limit.
            let line = Array("a line of text, ünïcødé ✓ 0123456789\n".utf8)
            var bytes: [UInt8] = []
            bytes.reserveCapacity(9 << 20)
            while bytes.count < 9 << 20 { bytes += line }
            return Array(bytes.prefix(9 << 20))
        }
    }

    /// `sh -c SCRIPT`: for redirections, so outputs land in files that `cmp` compares.
    @discardableResult
    func sh(_ script: String) throws -> ProgramResult { try run("/bin/sh", ["-c", script]) }

    func cmp(_ a: String, _ b: String) throws -> Bool { try run("/usr/bin/cmp", [a, b]).status == 0 }

    @Test(.tags(.mount), .needsFUSE, arguments: ["latin1", "utf16", "random", "big"])
    func importCatMountExportRoundTrip(kind: String) throws {
        let dir = makeTemporaryDirectory("binary-\(kind)")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let source = dir + "/src"
        try FileManager.default.createDirectory(atPath: source, withIntermediateDirectories: true)
        let bytes = Self.sample(kind)
        let original = source + "/\(kind).md"
        try Data(bytes).write(to: URL(fileURLWithPath: original))
        let db = dir + "/db"

        // Imported as a note (not an attachment), its bytes kept as they are.
        let imported = try notesfs(["import", "--json", source], db: db)
        #expect(imported.status == 0, "\(imported.stderr)")
        let summary = try parseJSON(imported.stdout) as? [String: Any]
        #expect(summary?["notes"] as? Int == 1)
        #expect(summary?["attachments"] as? Int == 0)
        #expect(try notesfs(["query", "title == '\(kind)'", "--type", "Note"], db: db).lines.count == 1)

        // ls -l and --json: the byte size, marked binary.
        let long = try notesfs(["ls", "-l"], db: db)
        #expect(long.lines.count == 1)
        #expect(long.lines.first?.hasPrefix("\(bytes.count) binary  ") == true, "\(long.out)")
        let json = try parseJSON(try notesfs(["ls", "--json"], db: db).stdout) as? [[String: Any]]
        #expect(json?.first?["size"] as? Int == bytes.count)
        #expect(json?.first?["binary"] as? Bool == true)

        // note cat writes the exact bytes.
        let cat = dir + "/cat.out"
        #expect(try sh("'\(notesfsBinary)' --db '\(db)' note cat '\(kind)' > '\(cat)'").status == 0)
        #expect(try cmp(original, cat))

        // export writes the exact bytes to Title.md.
        let out = dir + "/out"
        #expect(try notesfs(["export", out], db: db).status == 0)
        #expect(try cmp(original, out + "/\(kind).md"))

        // The mount shows the same bytes, and a copy made in the mount reads back through the CLI.
        do {
            let mount = try ChildMount(databasePath: db)
            defer { mount.close() }
            #expect(try cmp(original, mount.path + "/\(kind).md"))
            #expect(try run("/bin/cp", [original, mount.path + "/copy.md"]).status == 0)
        }
        let copy = dir + "/copy.out"
        #expect(try sh("'\(notesfsBinary)' --db '\(db)' note cat copy > '\(copy)'").status == 0)
        #expect(try cmp(original, copy))
        #expect(try notesfs(["ls", "-l", "copy"], db: db).out.hasPrefix("\(bytes.count) binary  "))
    }

    @Test func editingABinaryNoteSavesItsBytesAsTheMountDoes() throws {
        let dir = makeTemporaryDirectory("binary-edit")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let source = dir + "/src"
        try FileManager.default.createDirectory(atPath: source, withIntermediateDirectories: true)
        let latin = Self.sample("latin1")
        try Data(latin).write(to: URL(fileURLWithPath: source + "/Café.md"))
        let db = dir + "/db"
        #expect(try notesfs(["import", source], db: db).status == 0)
        let editor = dir + "/editor.sh"
        func edit(_ script: String) throws -> ProgramResult {
            try Data(("#!/bin/sh\n" + script + "\n").utf8).write(to: URL(fileURLWithPath: editor))
            chmod(editor, 0o755)
            return try notesfs(["note", "edit", "Café"], db: db, environment: ["VISUAL": editor])
        }
        func catBytes() throws -> [UInt8] { Array(try notesfs(["note", "cat", "Café"], db: db).stdout) }

        // The editor gets the exact bytes; an editor that changes nothing saves nothing.
        let expected = dir + "/expected"
        try Data(latin).write(to: URL(fileURLWithPath: expected))
        let unchanged = try edit("cmp -s \"$1\" '\(expected)' || exit 9")
        #expect(unchanged.status == 0, "\(unchanged.stderr)")
        #expect(unchanged.stderr.contains("unchanged"))

        // Still not UTF-8 after the edit: saved as the note's bytes.
        #expect(try edit("printf '\\377\\n' >> \"$1\"").status == 0)
        #expect(try catBytes() == latin + [0xFF, 0x0A])
        #expect(try notesfs(["ls", "-l"], db: db).out.contains("\(latin.count + 2) binary  "))

        // Made valid UTF-8: saved as text again, which queries see.
        #expect(try edit("printf 'caf\\303\\251 now text\\n' > \"$1\"").status == 0)
        #expect(try catBytes() == Array("café now text\n".utf8))
        #expect(try notesfs(["query", "text CONTAINS 'now text'"], db: db).lines.count == 1)
        #expect(try !notesfs(["ls", "-l"], db: db).out.contains("binary"))

        // note new --text stays text.
        #expect(try notesfs(["note", "new", "Plain", "--text", "plain"], db: db).status == 0)
        #expect(try notesfs(["query", "text == 'plain'"], db: db).lines.count == 1)
    }

    /// A sparse file imported as an attachment keeps its holes in the store and in the export.
    @Test func sparseFilesStaySparseThroughImportAndExport() throws {
        let dir = makeTemporaryDirectory("binary-sparse")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let source = dir + "/src"
        try FileManager.default.createDirectory(atPath: source, withIntermediateDirectories: true)
        let file = source + "/sparse.bin"
        // 64 MiB: one byte at 32 MiB, the rest holes.
        #expect(try sh("truncate -s 64M '\(file)' && printf x | dd of='\(file)' bs=1 seek=33554432 conv=notrunc status=none").status == 0)
        let db = dir + "/db"
        #expect(try notesfs(["import", source], db: db).status == 0)
        let usage = try sh("du -s --block-size=1 '\(db)/assets' | cut -f1")
        #expect((Int(usage.out.trimmingCharacters(in: .whitespacesAndNewlines)) ?? Int.max) < 1 << 20, "store uses \(usage.out) bytes")
        // The asset is named by the SHA-256 of all the bytes, holes included.
        let digest = try sh("sha256sum '\(file)' | cut -c1-64").out.trimmingCharacters(in: .whitespacesAndNewlines)
        let stored = try sh("ls '\(db)/assets'/*/").out.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(digest.count == 64 && stored == digest, "asset \(stored), sha256sum \(digest)")
        let out = dir + "/out"
        #expect(try notesfs(["export", out], db: db).status == 0)
        #expect(try cmp(file, out + "/sparse.bin"))
        var st = stat()
        #expect(stat(out + "/sparse.bin", &st) == 0)
        #expect(st.st_size == 64 << 20)
        #expect(Int(st.st_blocks) * 512 < 1 << 20, "export uses \(st.st_blocks) blocks")

        // An asset file cut short (damage) is reported, never padded with zeros as if it were a hole.
        #expect(truncate("\(db)/assets/\(stored.prefix(2))/\(stored)", 1 << 20) == 0)
        let cat = try notesfs(["note", "cat", "sparse.bin"], db: db)
        #expect(cat.status == 4, "\(cat.stderr)")
        #expect(cat.stderr.contains("shorter than its recorded size"))
    }
}
