/// A mount that cannot open its database fails before it daemonises, with a clear
/// message and a non-zero status, and leaves no mount behind. The real `notesfs DB MNT` binary runs
/// daemonised (no `-f`), as a user runs it.

import FUSE
import Foundation
import Glibc
import RecordStore
import TestSupport
import Testing

/// One daemonised start: the exit status of `notesfs DB MNT` (the parent, which exits once the
/// daemon reports), its stderr, and whether a mount is left at MNT (`mountpoint -q`).
private struct Start {
    var status: Int32?
    var stderr: String
    var mounted: Bool
}

/// `whileMounted` runs with the mountpoint when the start left a mount, before it is detached.
private func start(database: String, extra: [String] = [], whileMounted: (String) throws -> Void = { _ in }) throws -> Start? {
    let binary = notesfsBinary
    let mountpoint = makeTemporaryDirectory("notesfsstart")
    defer { rmdir(mountpoint) }
    let errPath = mountpoint + ".stderr"
    defer { unlink(errPath) }
    let process = try SpawnedProcess([binary, database, mountpoint] + extra, stdout: "/dev/null", stderr: errPath)
    let status = process.wait(seconds: 20)
    if status == nil { kill(process.pid, SIGKILL) }
    let mounted = try run(["/usr/bin/mountpoint", "-q", mountpoint]).status == 0
    if mounted {
        defer { detachMount(mountpoint) }
        try whileMounted(mountpoint)
    }
    return Start(status: status, stderr: (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "", mounted: mounted)
}

@Suite(.tags(.mount), .needsFUSE, .serialized) struct MountStartupTests {
    @Test func aDirectoryThatIsNotADatabaseFailsWithStatus6() throws {
        let directory = makeTemporaryDirectory("notesfsjunk")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(FileManager.default.createFile(atPath: directory + "/holiday.jpg", contents: Data("x".utf8)))
        guard let result = try start(database: directory) else { return }
        #expect(result.status == 6, "\(result)")
        #expect(result.stderr.contains("not a notesfs database"), "\(result.stderr)")
        #expect(!result.mounted)
        // Nothing was created in the foreign directory.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["holiday.jpg"])
    }

    @Test func aMissingDatabaseFailsWithStatus6() throws {
        let directory = makeTemporaryDirectory("notesfsgone")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        guard let result = try start(database: directory + "/missing") else { return }
        #expect(result.status == 6, "\(result)")
        #expect(result.stderr.contains("no such directory"), "\(result.stderr)")
        #expect(!result.mounted)
    }

    @Test func aNewerFormatFailsWithStatus6() throws {
        try withDatabaseDirectory { path in
            try RecordDatabase(path: path, create: true).close()
            try Data("{\"format\":999,\"databaseID\":\"x\"}\n".utf8).write(to: URL(fileURLWithPath: path + "/notesfs.json"))
            guard let result = try start(database: path) else { return }
            #expect(result.status == 6, "\(result)")
            #expect(result.stderr.contains("999"), "\(result.stderr)")
            #expect(!result.mounted)
        }
    }

    /// The database directory on a read-only bind mount: the store opens it read-only and the
    /// mount serves it, saying so (reads work, writes are refused with EROFS, unmount ends it).
    /// Never a dead mount.
    @Test(.enabled(if: getuid() == 0, "bind mounts need root"))
    func aReadOnlyDatabaseMountsReadOnly() throws {
        try withDatabaseDirectory { path in
            let database = try RecordDatabase(path: path, create: true)
            try saveNote(database, title: "kept", text: "read only")
            try database.close()
            let readOnly = makeTemporaryDirectory("notesfsro")
            defer { rmdir(readOnly) }
            let bind = try sh(
                "mount --bind \(shellQuoted(path)) \(shellQuoted(readOnly)) && mount -o remount,bind,ro \(shellQuoted(readOnly))")
            if bind.status != 0 { _ = try sh("umount \(shellQuoted(readOnly))") }
            try #require(bind.status == 0, "mount --bind: \(bind)")
            defer { _ = try? sh("umount \(shellQuoted(readOnly))") }
            var served = false
            guard
                let result = try start(
                    database: readOnly,
                    whileMounted: { mountpoint in
                        served = true
                        #expect(readFile(mountpoint + "/kept.md") == "read only", "the mount left is dead or empty")
                        #expect(writeFile(mountpoint + "/new.md", "x") == EROFS)
                        var stats = statvfs()
                        #expect(statvfs(mountpoint, &stats) == 0)
                        #expect(stats.f_flag & UInt(ST_RDONLY) != 0, "the kernel does not know the mount is read-only")
                        let unmount = try run(["/usr/bin/fusermount3", "-u", mountpoint])
                        #expect(unmount.status == 0)
                    })
            else { return }
            #expect(result.status == 0, "\(result)")
            #expect(served, "no mount was left to serve the database")
            #expect(result.stderr.contains("serving it read-only"), "\(result.stderr)")
        }
    }

    /// The good case, daemonised: the parent exits 0 once the daemon serves; unmounting ends it.
    @Test func aGoodDatabaseMountsInTheBackground() throws {
        try withDatabaseDirectory { path in
            let database = try RecordDatabase(path: path, create: true)
            try saveNote(database, title: "hello", text: "world")
            try database.close()
            let binary = notesfsBinary
            let mountpoint = makeTemporaryDirectory("notesfsstart")
            defer { rmdir(mountpoint) }
            let process = try SpawnedProcess([binary, path, mountpoint], stdout: "/dev/null", stderr: "/dev/null")
            let status = process.wait(seconds: 20)
            defer { detachMount(mountpoint) }
            #expect(status == 0)
            #expect(try run(["/usr/bin/mountpoint", "-q", mountpoint]).status == 0)
            #expect(readFile(mountpoint + "/hello.md") == "world")
            #expect(try run(["/usr/bin/fusermount3", "-u", mountpoint]).status == 0)
            #expect(try run(["/usr/bin/mountpoint", "-q", mountpoint]).status != 0)
        }
    }
}
