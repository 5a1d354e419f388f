import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// One file's size and mtime in nanoseconds.
struct FileStamp: Equatable {
    var isDirectory: Bool
    var size: Int
    var nanoseconds: Int
}

func stamps(under root: String) -> [String: FileStamp] {
    var result: [String: FileStamp] = [:]
    guard let enumerator = FileManager.default.enumerator(atPath: root) else { return result }
    while let relative = enumerator.nextObject() as? String {
        var st = stat()
        guard lstat(root + "/" + relative, &st) == 0 else { continue }
        result[relative] = FileStamp(
            isDirectory: st.st_mode & S_IFMT == S_IFDIR, size: Int(st.st_size),
            nanoseconds: st.st_mtim.tv_sec * 1_000_000_000 + st.st_mtim.tv_nsec)
    }
    return result
}

func setModificationTime(_ path: String, seconds: Int, nanoseconds: Int) {
    var times = [timespec(tv_sec: seconds, tv_nsec: nanoseconds), timespec(tv_sec: seconds, tv_nsec: nanoseconds)]
    utimensat(AT_FDCWD, path, &times, AT_SYMLINK_NOFOLLOW)
}

/// Imports `source`, exports it again, and checks `diff -r` and every mtime (to the microsecond) and size.
func roundTrip(_ source: String, label: String) throws {
    let db = makeDatabasePath(label)
    let imported = try notesfs(["import", source], db: db)
    #expect(imported.status == 0, "\(imported.stderr)")
    let out = makeTemporaryDirectory(label + "-out") + "/export"
    let exported = try notesfs(["export", out], db: db)
    #expect(exported.status == 0, "\(exported.stderr)")
    let diff = try run("/usr/bin/diff", ["-r", source, out])
    #expect(diff.status == 0, "\(diff.out.prefix(2000))")
    let before = stamps(under: source)
    let after = stamps(under: out)
    #expect(Set(before.keys) == Set(after.keys))
    var mismatches: [String] = []
    for (path, stamp) in before {
        guard let other = after[path] else { continue }
        if stamp.isDirectory != other.isDirectory || (!stamp.isDirectory && stamp.size != other.size)
            || abs(stamp.nanoseconds - other.nanoseconds) >= 1000
        {
            mismatches.append("\(path): \(stamp) vs \(other)")
        }
    }
    #expect(mismatches.isEmpty, "\(mismatches.prefix(10))")
    #expect(try notesfs(["fsck"], db: db).status == 0)
}

@Suite struct ImportExportTests {
    /// Writes a tree of `fileCount` files with awkward names and contents; returns its root.
    static func generateTree(fileCount: Int) throws -> String {
        var random = SeededGenerator(state: 20_261_129)
        let root = makeTemporaryDirectory("tree") + "/src"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let stems = [
            "Plan", "Café", "cafe\u{301}", "日本語 ノート", "emoji 🧪 test", "with space", "#hashtag", "a#b#c", "100% done", "it's",
            "Ünïcödé Ω≈ç√", "semi;colon", "ends with dot.", "(parens) [brackets] {braces}", "dash-and_underscore", "a∕b",
        ]
        var directories = [root]
        for index in 0..<60 {
            let parent = directories[Int.random(in: 0..<directories.count, using: &random)]
            let name = index % 7 == 0 ? ".dir \(index)" : "\(stems[index % stems.count]) \(index)"
            let path = parent + "/" + name
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            directories.append(path)
        }
        var files: [String] = []
        func write(_ data: Data, _ path: String) throws {
            try data.write(to: URL(fileURLWithPath: path))
            files.append(path)
        }
        // The awkward ones, at the root and deep down.
        let deep = directories.last!
        try write(Data("# hidden\n".utf8), root + "/.hidden.md")
        try write(Data("long ascii".utf8), root + "/" + String(repeating: "a", count: 252) + ".md")
        try write(Data("long unicode".utf8), deep + "/" + String(repeating: "é", count: 126) + ".md")
        try write(Data((0..<300).map { _ in UInt8.random(in: 0...255, using: &random) }), deep + "/" + String(repeating: "b", count: 255))
        try write(Data([0x23, 0x20, 0xFF, 0xFE, 0x80, 0x0A]), root + "/invalid utf8.md")
        try write(Data([0xEF, 0xBB, 0xBF]) + Data("BOM\r\nCRLF\r\n\u{0}NUL\u{2028}".utf8), root + "/bytes.md")
        try write(Data(), root + "/empty.md")
        try write(Data("not a note".utf8), root + "/README")
        try write(Data("x".utf8), root + "/notes.md.bak")
        while files.count < fileCount {
            let directory = directories[Int.random(in: 0..<directories.count, using: &random)]
            let stem = stems[Int.random(in: 0..<stems.count, using: &random)] + " \(files.count)"
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<7:
                let lines = (0..<Int.random(in: 0..<40, using: &random)).map { "line \($0) — \(stem) ✓" }
                try write(
                    Data(("# " + stem + "\n\n" + lines.joined(separator: "\n")).utf8),
                    directory + "/" + (files.count % 11 == 0 ? "." : "") + stem + ".md")
            default:
                let ext = [".png", ".pdf", ".bin", ""][files.count % 4]
                try write(
                    Data((0..<Int.random(in: 0..<5000, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }),
                    directory + "/" + stem + ext)
            }
        }
        for file in files {
            setModificationTime(
                file, seconds: Int.random(in: 0..<1_900_000_000, using: &random),
                nanoseconds: Int.random(in: 0..<1_000_000_000, using: &random))
        }
        for directory in directories.dropFirst().reversed() {
            setModificationTime(
                directory, seconds: Int.random(in: 1_000_000_000..<1_900_000_000, using: &random),
                nanoseconds: Int.random(in: 0..<1_000_000_000, using: &random))
        }
        return root
    }

    @Test(.tags(.slow), .notInFastRuns) func generatedTreeRoundTripsByteForByte() throws {
        let source = try Self.generateTree(fileCount: 1000)
        #expect(stamps(under: source).values.filter { !$0.isDirectory }.count == 1000)
        try roundTrip(source, label: "generated")
        // The invalid UTF-8 .md file became a note kept as its bytes (content), like the others a note.
        let db = makeDatabasePath("generated-v")
        let verbose = try notesfs(["import", "-v", source], db: db)
        #expect(verbose.stderr.contains("invalid utf8.md: not UTF-8 text of at most 8 MiB; imported as the note's bytes"))
        #expect(try notesfs(["query", "title == 'invalid utf8'", "--type", "Note"], db: db).lines.count == 1)
        #expect(try notesfs(["query", "name == 'invalid utf8.md'", "--type", "Attachment"], db: db).lines.isEmpty)
    }

    @Test func importIntoAFolderAndExportFromIt() throws {
        let source = makeTemporaryDirectory("into") + "/src"
        try FileManager.default.createDirectory(atPath: source + "/sub", withIntermediateDirectories: true)
        try Data("one".utf8).write(to: URL(fileURLWithPath: source + "/one.md"))
        try Data("two".utf8).write(to: URL(fileURLWithPath: source + "/sub/two.md"))
        let db = makeDatabasePath("into")
        try notesfs(["folder", "new", "Inbox"], db: db)
        #expect(try notesfs(["import", source, "--into", "Inbox"], db: db).status == 0)
        #expect(try notesfs(["note", "cat", "Inbox/sub/two"], db: db).out == "two")
        let out = makeTemporaryDirectory("from") + "/out"
        #expect(try notesfs(["export", out, "--from", "Inbox"], db: db).status == 0)
        #expect(try run("/usr/bin/diff", ["-r", source, out]).status == 0)
        let json = try parseJSON(try notesfs(["import", "--json", source], db: db).stdout) as? [String: Any]
        #expect(json?["notes"] as? Int == 2)
        #expect(json?["folders"] as? Int == 1)
        #expect(try notesfs(["import", source + "/missing"], db: db).status == 1)
        #expect(try notesfs(["import", source, "--into", "Nope"], db: db).status == 1)
    }

    @Test func namesThatAreNotUTF8AreReportedAndTheRestImported() throws {
        let source = makeTemporaryDirectory("badname") + "/src"
        try FileManager.default.createDirectory(atPath: source, withIntermediateDirectories: true)
        try Data("fine".utf8).write(to: URL(fileURLWithPath: source + "/ok.md"))
        let bad = Array(source.utf8) + [0x2F, 0x66, 0xFF, 0x2E, 0x6D, 0x64, 0]
        let fd = bad.withUnsafeBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) { open($0, O_CREAT | O_WRONLY, 0o644) }
        }
        #expect(fd >= 0)
        close(fd)
        let db = makeDatabasePath("badname")
        let result = try notesfs(["import", source], db: db)
        #expect(result.status == 5)
        #expect(result.stderr.contains("/f\u{FFFD}.md: file name is not UTF-8; not imported\n"))
        #expect(result.stderr.hasSuffix("notesfs: \(source): 1 file not imported\n"))
        #expect(try notesfs(["note", "cat", "ok"], db: db).out == "fine")
    }

    @Test(.tags(.slow), .notInFastRuns) func markdownCorpusOnThisMachineRoundTrips() throws {
        let source = makeTemporaryDirectory("corpus") + "/src"
        var copied = 0
        for (base, limit) in [("/usr/share/doc", 200), ("/opt/swift", 300)] {
            guard let enumerator = FileManager.default.enumerator(atPath: base) else { continue }
            while copied < limit, let relative = enumerator.nextObject() as? String {
                guard relative.hasSuffix(".md") else { continue }
                let from = base + "/" + relative
                var st = stat()
                guard lstat(from, &st) == 0, st.st_mode & S_IFMT == S_IFREG, st.st_size < 1 << 20,
                    let data = FileManager.default.contents(atPath: from)
                else { continue }
                let to = source + base + "/" + relative
                try FileManager.default.createDirectory(
                    atPath: (to as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                try data.write(to: URL(fileURLWithPath: to))
                setModificationTime(to, seconds: st.st_mtim.tv_sec, nanoseconds: st.st_mtim.tv_nsec)
                copied += 1
            }
        }
        #expect(copied > 50, "markdown files found under /usr/share/doc and /opt/swift")
        try roundTrip(source, label: "corpus")
    }
}
