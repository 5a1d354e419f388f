/// The `notesfs DB MNT` daemon as a child process: durability across SIGTERM/SIGKILL, fsync,
/// `-o sync`, cross-process changes, and the mount form's refusals and ways to end it.

import FUSE
import Foundation
import Glibc
import Notes
import RecordStore
import TestSupport
import Testing

/// The text of the note titled `title` in the database at `path` (opened afresh).
private func storedText(_ path: String, title: String) throws -> String? {
    let database = try openDatabase(path)
    defer { try? database.close() }
    return note(database, titled: title)?.text
}

@Suite(.tags(.mount), .needsFUSE) struct DaemonTests {
    @Test func sigtermFlushesAnOpenDirtyFile() throws {
        try withChildMount { child in
            let fd = open(child.path + "/dirty.md", O_CREAT | O_WRONLY, 0o644)
            #expect(fd >= 0)
            #expect(write(fd, "written, never closed", 21) == 21)
            #expect(kill(child.pid, SIGTERM) == 0)
            let status = child.waitForExit()
            #expect(status == 0, "notesfs after SIGTERM: \(status.map(String.init) ?? "still running"); log: \(child.log)")
            close(fd)
            let stored = try storedText(child.databasePath, title: "dirty")
            #expect(stored == "written, never closed")
            #expect(!isMounted(child.path))
        }
    }

    @Test func sigkillAfterCloseKeepsTheNote() throws {
        try withChildMount { child in
            #expect(writeFile(child.path + "/killed.md", "closed before the kill") == 0)
            #expect(kill(child.pid, SIGKILL) == 0)
            #expect(child.waitForExit() != nil)
            detachMount(child.path)
            let stored = try storedText(child.databasePath, title: "killed")
            #expect(stored == "closed before the kill")
            let database = try openDatabase(child.databasePath)
            defer { try? database.close() }
            #expect(try database.check().problems.isEmpty)
        }
    }

    @Test func fsyncMakesTheContentVisibleInTheDatabase() throws {
        try withChildMount { child in
            let fd = open(child.path + "/synced.md", O_CREAT | O_WRONLY, 0o644)
            #expect(fd >= 0)
            defer { close(fd) }
            #expect(write(fd, "fsynced bytes", 13) == 13)
            #expect(fsync(fd) == 0)
            // Another process (handle) reads it while the file is still open.
            let stored = try storedText(child.databasePath, title: "synced")
            #expect(stored == "fsynced bytes")
        }
    }

    @Test func syncMountSurvivesSigkillAfterClose() throws {
        try withChildMount(arguments: ["-o", "sync"]) { child in
            #expect(mkdir(child.path + "/d", 0o755) == 0)
            #expect(writeFile(child.path + "/d/s.md", "sync mount") == 0)
            #expect(kill(child.pid, SIGKILL) == 0)
            #expect(child.waitForExit() != nil)
            detachMount(child.path)
            let stored = try storedText(child.databasePath, title: "s")
            #expect(stored == "sync mount")
        }
    }

    @Test func changesFromAnotherProcessShowUp() throws {
        var id: RecordID?
        try withChildMount(seed: { db in id = try saveNote(db, title: "shared", text: "version 1").recordID }) { child in
            let path = child.path + "/shared.md"
            #expect(readFile(path) == "version 1")
            let other = try openDatabase(child.databasePath)
            defer { try? other.close() }
            var record = try other.record(for: try #require(id))
            record["text"] = .string("version 2")
            try other.modify(saving: [record])
            #expect(eventually(2) { readFile(path) == "version 2" }, "stale content: \(readFile(path) ?? "nil")")
            // And the mount's writes reach the other handle.
            #expect(writeFile(path, "version 3") == 0)
            #expect(eventually(2) { (try? other.refresh()) != nil && note(other, titled: "shared")?.text == "version 3" })
            #expect(recordName(path) == id?.recordName)
        }
    }

    @Test func vimOnTheDaemonMount() throws {
        try withChildMount { child in
            #expect(writeFile(child.path + "/v.md", "a\n") == 0)
            let name = try #require(recordName(child.path + "/v.md"))
            let result = try sh(
                "vim -u DEFAULTS -i NONE -es -c 'normal Gob' -c wq v.md", in: child.path, environment: ["HOME": "/tmp", "TERM": "dumb"])
            #expect(result.status == 0, "\(result)")
            #expect(readFile(child.path + "/v.md") == "a\nb\n")
            #expect(recordName(child.path + "/v.md") == name)
            #expect(child.unmount() == 0)
            let database = try openDatabase(child.databasePath)
            defer { try? database.close() }
            #expect(fileRecordCount(database) == 1)
            #expect(note(database, recordName: name)?.text == "a\nb\n")
        }
    }

    @Test func fusermountEndsTheDaemon() throws {
        try withChildMount { child in
            #expect(writeFile(child.path + "/f.md", "f") == 0)
            let status = child.unmount()
            #expect(status == 0, "notesfs after fusermount3 -u: \(status.map(String.init) ?? "still running")")
            #expect(!isMounted(child.path))
            let stored = try storedText(child.databasePath, title: "f")
            #expect(stored == "f")
        }
    }

    @Test func umountEndsTheDaemon() throws {
        try withChildMount { child in
            let result = try run(["/bin/umount", child.path], timeout: 10)
            #expect(result.status == 0, "\(result)")
            let status = child.waitForExit()
            #expect(status == 0, "notesfs after umount: \(status.map(String.init) ?? "still running")")
            #expect(!isMounted(child.path))
        }
    }

    @Test func mountingOnALiveMountpointIsRefused() throws {
        try withChildMount { child in
            try withDatabaseDirectory { other in
                try FileManager.default.createDirectory(atPath: other, withIntermediateDirectories: true)
                let binary = notesfsBinary
                let result = try run([binary, other, child.path, "-f"], timeout: 10)
                #expect(result.status != 0, "\(result)")
                #expect(result.stderr.contains("notesfs:"), "\(result)")
                #expect(result.stderr.contains(child.path), "\(result)")
            }
            // The first mount still works.
            #expect(writeFile(child.path + "/still.md", "ok") == 0)
            #expect(readFile(child.path + "/still.md") == "ok")
        }
    }

    @Test func missingDatabaseDirectoryIsRefused() throws {
        let binary = notesfsBinary
        let mountpoint = makeTemporaryDirectory("notesfsnodb")
        defer { rmdir(mountpoint) }
        let missing = mountpoint + "-missing-db"
        let result = try run([binary, missing, mountpoint, "-f"], timeout: 10)
        #expect(result.status != 0, "\(result)")
        #expect(result.stderr.contains(missing), "\(result)")
        #expect(!isMounted(mountpoint))
        if isMounted(mountpoint) { detachMount(mountpoint) }
        #expect(!FileManager.default.fileExists(atPath: missing), "the database directory was created")
    }

    @Test func daemonisedMountAndUnmount() throws {
        let binary = notesfsBinary
        try withDatabaseDirectory { db in
            try RecordDatabase(path: db).close()
            let mountpoint = makeTemporaryDirectory("notesfsdaemon")
            defer { rmdir(mountpoint) }
            let result = try run([binary, db, mountpoint], timeout: 20)
            #expect(result.status == 0, "\(result)")
            // The daemon: the process whose command line names this (unique) mountpoint.
            let daemon = daemonPID(mountpoint: mountpoint)
            let watchdog = Watchdog(seconds: 30) {
                if let daemon { kill(daemon, SIGKILL) }
                detachMount(mountpoint)
            }
            defer {
                #expect(watchdog.cancel(), "watchdog fired")
                if let daemon, processExists(daemon) { kill(daemon, SIGKILL) }
                if isMounted(mountpoint) { detachMount(mountpoint) }
            }
            #expect(isMounted(mountpoint))
            #expect(daemon != nil)
            #expect(writeFile(mountpoint + "/bg.md", "from the background") == 0)
            #expect(readFile(mountpoint + "/bg.md") == "from the background")
            let unmount = try run(["/usr/bin/fusermount3", "-u", mountpoint], timeout: 10)
            #expect(unmount.status == 0, "\(unmount)")
            if let daemon { #expect(eventually(10) { !processExists(daemon) }, "the daemon did not exit") }
            #expect(!isMounted(mountpoint))
            let stored = try storedText(db, title: "bg")
            #expect(stored == "from the background")
        }
    }
}

/// The pid of the `notesfs` process whose command line ends with `mountpoint` (from /proc).
private func daemonPID(mountpoint: String) -> pid_t? {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    for entry in entries {
        guard let pid = pid_t(entry), let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { continue }
        let arguments = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        if arguments.first?.hasSuffix("notesfs") == true, arguments.contains(mountpoint) { return pid }
    }
    return nil
}
