import Foundation
import TestSupport
import Testing

/// `notesfs` starts without libpq and libcrypto: the Postgres module loads libpq (`dlopen`) when
/// a command first talks to a server, the record store libcrypto when it first takes a SHA-256,
/// so that the other commands do not pay for loading them (and the libraries libpq needs) at
/// start. The dynamic loader's own trace (`LD_DEBUG=files`, on stderr) says which
/// files a run loaded and why.
@Suite struct StartupLibraryTests {
    /// The files the dynamic loader opened for one run (`file=NAME` lines), and the run.
    func loadedFiles(_ arguments: [String], db: String?) throws -> (files: [String], result: ProgramResult) {
        let result = try notesfs(arguments, db: db, environment: ["LD_DEBUG": "files"])
        let files = result.stderr.split(separator: "\n").compactMap { line -> String? in
            guard let start = line.range(of: "file=") else { return nil }
            return String(line[start.upperBound...].prefix(while: { $0 != " " && $0 != "\t" }))
        }
        return (files, result)
    }

    @Test(arguments: [["--version"], ["--help"], ["ls"]])
    func aCommandThatDoesNotSyncOrHashLoadsNeitherLibpqNorLibcrypto(_ arguments: [String]) throws {
        let db = makeDatabasePath("startup")
        defer { try? FileManager.default.removeItem(atPath: (db as NSString).deletingLastPathComponent) }
        try notesfs(["folder", "new", "Inbox"], db: db)
        let (files, result) = try loadedFiles(arguments, db: arguments == ["ls"] ? db : nil)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(files.contains { $0.hasPrefix("libc.so") }, "the loader's trace lists what it loaded: \(files)")
        #expect(!files.contains { $0.contains("libpq") || $0.contains("libcrypto") }, "\(files)")
    }

    /// A sync command loads libpq when it connects: `sync init` with a server that is not there
    /// fails with libpq's own message (so libpq was loaded and ran), not with a load failure.
    @Test func aSyncCommandLoadsLibpqWhenItConnects() throws {
        let db = makeDatabasePath("startup-sync")
        defer { try? FileManager.default.removeItem(atPath: (db as NSString).deletingLastPathComponent) }
        let missing = "/tmp/notesfs-no-server-" + UUID().uuidString
        let (files, result) = try loadedFiles(["sync", "init", "host=\(missing) dbname=notes", "--no-encryption"], db: db)
        #expect(result.status != 0)
        #expect(files.contains("libpq.so.5"), "\(files)")
        #expect(result.stderr.contains(missing), "libpq's message names the socket: \(result.stderr)")
        #expect(!result.stderr.contains("cannot load libpq"), "\(result.stderr)")
    }

    /// A command that only reads makes nothing durable (no `fsync`/`fdatasync`: they wait for the
    /// disk) and loads no time zone (Foundation's date formatter reads them and builds an ICU
    /// calendar; an open used one to name a `lost+found` directory it did not need). The system
    /// calls are `strace`'s.
    @Test func aCommandThatOnlyReadsNeitherSyncsNorLoadsTimeZones() throws {
        let db = makeDatabasePath("startup-reads")
        defer { try? FileManager.default.removeItem(atPath: (db as NSString).deletingLastPathComponent) }
        try notesfs(["folder", "new", "Inbox"], db: db)
        try notesfs(["note", "new", "Inbox/A", "--text", "words"], db: db)
        let trace = (db as NSString).deletingLastPathComponent + "/trace"
        for arguments in [["ls", "Inbox"], ["note", "cat", "Inbox/A.md"]] {
            let result = try run(
                [
                    "/usr/bin/strace", "-f", "-o", trace, "-e", "trace=fsync,fdatasync,sync_file_range,syncfs,openat", notesfsBinary,
                    "--db", db,
                ]
                    + arguments)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            let calls = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n")
            #expect(calls.contains { $0.contains("journal.jsonl") }, "the trace lists the command's own opens: \(arguments)")
            #expect(!calls.contains { $0.contains("sync") }, "\(arguments): \(calls.filter { $0.contains("sync") })")
            #expect(!calls.contains { $0.contains("zoneinfo") || $0.contains("localtime") }, "\(arguments)")
        }
    }

    /// `query` prints names and paths from the index's metadata: a query by folder opens none of
    /// the notes' record files (it read all of them, to print their names), and prints the same.
    @Test func aQueryByFolderPrintsWithoutReadingRecordFiles() throws {
        let db = makeDatabasePath("query-reads")
        let scratch = (db as NSString).deletingLastPathComponent
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        // Notes of 40 KB: past what the index holds whole, and past a checkpoint (1 MiB of
        // journal), so that their records are read from their files.
        try FileManager.default.createDirectory(atPath: scratch + "/tree/Inbox", withIntermediateDirectories: true)
        for i in 0..<30 {
            try Data(String(repeating: "words \(i) ", count: 5_000).utf8).write(to: URL(fileURLWithPath: scratch + "/tree/Inbox/N\(i).md"))
        }
        #expect(try notesfs(["-q", "import", scratch + "/tree"], db: db).status == 0)
        let folder = try notesfs(["query", "name == 'Inbox'", "--type", "Folder"], db: db).out.split(separator: "\t")[0]
        let trace = scratch + "/trace"
        let result = try run([
            "/usr/bin/strace", "-f", "-o", trace, "-e", "trace=openat", notesfsBinary, "--db", db, "query", "folder == '\(folder)'",
            "--sort", "title",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.out.split(separator: "\n")
        #expect(lines.count == 30)
        #expect(lines.first?.hasSuffix("\tInbox/N0.md") == true, "\(lines.prefix(2))")
        let opens = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n")
        #expect(opens.contains { $0.contains("journal.jsonl") }, "the trace lists the command's own opens")
        let recordFiles = opens.filter { $0.contains(".json\"") && !$0.contains("notesfs.json") }
        #expect(recordFiles.isEmpty, "\(recordFiles.count) record files opened: \(recordFiles.prefix(2))")
    }
}
