/// A throwaway PostgreSQL server for the tests that sync.

import Foundation
import Postgres
import Synchronization

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// A throwaway PostgreSQL cluster for this test process: `initdb` into a temporary directory, a
/// Unix socket in that directory and no TCP, run as the `postgres` user when the tests run as root
/// (the server refuses root). Started by the first test that asks; a watcher process stops it and
/// removes the directory once this process has exited.
public final class TestCluster: Sendable {
    /// The cluster every test of this process shares (each test makes its own database in it).
    public static let shared: Result<TestCluster, TestClusterError> = Result { () throws(TestClusterError) in try TestCluster() }

    public let directory: String
    let binaries: String
    public static let password = "notesfs-test-password"

    /// A cluster of its own, for a test that stops and starts the server (the shared one must
    /// stay up for the tests running beside it).
    public init() throws(TestClusterError) {
        reportBrokenPipes()
        guard let binaries = Self.findBinaries() else { throw TestClusterError("no /usr/lib/postgresql/*/bin/initdb: run scripts/deps.sh") }
        self.binaries = binaries
        directory = makeTemporaryDirectory("notesfs-pg")
        let passwordFile = directory + "/password"
        _ = FileManager.default.createFile(atPath: passwordFile, contents: Data(Self.password.utf8))
        if getuid() == 0 {
            guard let user = getpwnam("postgres") else { throw TestClusterError("no postgres user: install postgresql") }
            chown(directory, user.pointee.pw_uid, user.pointee.pw_gid)
            chown(passwordFile, user.pointee.pw_uid, user.pointee.pw_gid)
        }
        try runAsServerUser(
            "initdb",
            ["-D", dataDirectory, "-U", "postgres", "--auth=scram-sha-256", "--pwfile=" + passwordFile, "-E", "UTF8", "--no-sync"])
        watchForExit()
        try start()
    }

    public var dataDirectory: String { directory + "/data" }

    /// The running server (`postgres` as a child of this process), nil while stopped.
    private let server = Mutex<Process?>(nil)

    /// Starts the server and waits until it takes connections. fsync is off: the tests kill
    /// clients, never this server.
    ///
    /// `postgres` runs as a child, not daemonised by `pg_ctl start`: Foundation reaps a child only
    /// once every process holding its status socket has closed it, and a daemon holds it forever.
    public func start() throws(TestClusterError) {
        let process = serverUserProcess(
            "postgres", ["-D", dataDirectory, "-c", "listen_addresses=", "-k", directory, "-c", "fsync=off"])
        _ = FileManager.default.createFile(atPath: directory + "/server.log", contents: nil)
        let log = FileHandle(forWritingAtPath: directory + "/server.log")
        log?.seekToEndOfFile()
        process.standardOutput = log
        process.standardError = log
        process.standardInput = FileHandle.nullDevice
        do { try process.run() } catch { throw TestClusterError("postgres: \(error)") }
        server.withLock { $0 = process }
        for _ in 0..<600 {
            if (try? Connection(conninfo())) != nil { return }
            guard process.isRunning else { break }
            usleep(100_000)
        }
        let text = (try? String(contentsOfFile: directory + "/server.log", encoding: .utf8)) ?? ""
        throw TestClusterError("the test server did not start: \(text.suffix(2000))")
    }

    /// Stops the server (`pg_ctl stop -m fast`), for tests of a server that is down.
    public func stop() throws(TestClusterError) {
        try runAsServerUser("pg_ctl", ["-D", dataDirectory, "-w", "-m", "fast", "stop"])
        let process = server.withLock { process in
            defer { process = nil }
            return process
        }
        process?.waitUntilExit()
    }

    /// A libpq conninfo for `database` on this cluster.
    public func conninfo(database: String = "postgres", password: String = TestCluster.password) -> String {
        "host=\(directory) user=postgres dbname=\(database) password=\(password) connect_timeout=10"
    }

    /// A new empty database for one test; returns its conninfo.
    public func makeDatabase() throws -> String {
        let name = "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        let admin = try Connection(conninfo())
        try admin.execute("CREATE DATABASE \(name)")
        return conninfo(database: name)
    }

    /// `pg_dump` of the database `conninfo` names (made by ``makeDatabase()``): the whole of what
    /// the server holds, as its owner or a backup would see it.
    public func dump(_ conninfo: String) throws -> String {
        let result = try run([binaries + "/pg_dump", "--no-owner", "-d", conninfo], timeout: 60)
        guard result.status == 0 else { throw TestClusterError("pg_dump exited with \(result.status): \(result.stderr)") }
        return result.out
    }

    static func findBinaries() -> String? {
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).compactMap(Int.init).sorted()
        return versions.reversed().map { "\(root)/\($0)/bin" }.first { FileManager.default.fileExists(atPath: $0 + "/initdb") }
    }

    /// A process running one of the server's programs as the `postgres` user (via `runuser` as root).
    private func serverUserProcess(_ tool: String, _ arguments: [String]) -> Process {
        let process = Process()
        if getuid() == 0 {
            process.executableURL = URL(fileURLWithPath: "/usr/sbin/runuser")
            process.arguments = ["-u", "postgres", "--", binaries + "/" + tool] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: binaries + "/" + tool)
            process.arguments = arguments
        }
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        return process
    }

    /// Runs one of the server's programs to its end; throws with its output when it fails.
    private func runAsServerUser(_ tool: String, _ arguments: [String]) throws(TestClusterError) {
        let process = serverUserProcess(tool, arguments)
        // A file, not a pipe: the server pg_ctl starts could hold a pipe's write end open forever.
        let outputPath = directory + "/\(tool).out"
        _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
        guard let output = FileHandle(forWritingAtPath: outputPath) else { throw TestClusterError("cannot create \(outputPath)") }
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        do { try process.run() } catch { throw TestClusterError("\(tool): \(error)") }
        process.waitUntilExit()
        try? output.close()
        let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        guard process.terminationStatus == 0 else {
            let log = (try? String(contentsOfFile: directory + "/server.log", encoding: .utf8)) ?? ""
            throw TestClusterError("\(tool) exited with \(process.terminationStatus): \(text)\n\(log.suffix(2000))")
        }
    }

    /// A detached shell that waits for this process to end, then stops the server and removes it all.
    private func watchForExit() {
        let asUser = getuid() == 0 ? "/usr/sbin/runuser -u postgres -- " : ""
        runAfterThisProcess(
            """
            \(asUser)\(binaries)/pg_ctl -D \(dataDirectory) -m immediate stop >/dev/null 2>&1
            rm -rf \(directory)
            """)
    }
}

public struct TestClusterError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// The shared cluster, or a failure that says why it could not start.
public func cluster() throws -> TestCluster { try TestCluster.shared.get() }
