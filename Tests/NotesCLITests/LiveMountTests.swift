import Foundation
import RecordStore
import TestSupport
import Testing

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// The CLI and a live mount (`notesfs DB MNT -f`, another process) on one database.
@Suite(.tags(.mount), .needsFUSE) struct LiveMountTests {
    @Test func aNoteCreatedByTheCLIAppearsInTheMount() throws {
        let db = makeDatabasePath("live")
        #expect(try notesfs(["folder", "new", "Inbox"], db: db).status == 0)
        let mount = try ChildMount(databasePath: db)
        defer { mount.close() }
        let file = mount.path + "/Inbox/From the CLI.md"
        #expect(try notesfs(["note", "new", "Inbox/From the CLI", "--text", "written by the CLI\n"], db: db).status == 0)
        #expect(eventually { (try? String(contentsOfFile: file, encoding: .utf8)) == "written by the CLI\n" })
        // And a note written in the mount is what the CLI reads.
        try Data("written in the mount\n".utf8).write(to: URL(fileURLWithPath: mount.path + "/Inbox/From the mount.md"))
        let cat = try notesfs(["note", "cat", "Inbox/From the mount"], db: db)
        #expect(cat.status == 0)
        #expect(cat.out == "written in the mount\n")
        // A folder removed by the CLI (cascading) disappears from the mount.
        #expect(try notesfs(["folder", "rm", "Inbox"], db: db).status == 0)
        #expect(eventually { access(mount.path + "/Inbox", F_OK) != 0 && access(file, F_OK) != 0 })
    }

    @Test func editingInTheMountDuringNoteEditIsAReportedConflict() throws {
        let db = makeDatabasePath("conflict")
        #expect(try notesfs(["note", "new", "Shared", "--text", "v1\n"], db: db).status == 0)
        let mount = try ChildMount(databasePath: db)
        defer { mount.close() }
        let file = mount.path + "/Shared.md"
        #expect(eventually { (try? String(contentsOfFile: file, encoding: .utf8)) == "v1\n" })
        // The "editor" saves a change through the mount while note edit has the note open, then edits.
        let scripts = makeTemporaryDirectory("editor")
        let editor = scripts + "/editor.sh"
        try Data("#!/bin/sh\nprintf 'from the mount\\n' >> '\(file)'\nprintf 'from note edit\\n' > \"$1\"\n".utf8)
            .write(to: URL(fileURLWithPath: editor))
        // Run through sh, not exec'd: a fork elsewhere in the test process may still hold the script's
        // write descriptor (exec would fail with ETXTBSY, "Text file busy").
        let edit = try notesfs(
            ["note", "edit", "Shared"], db: db, environment: ["EDITOR": "/bin/sh " + editor, "VISUAL": "/bin/sh " + editor])
        #expect(edit.status == 3, "stderr: \(edit.stderr)")
        #expect(edit.stderr.contains("Shared"))
        // Nothing lost: the mount's change is in the database, the editor's text is kept in a file.
        #expect(try notesfs(["note", "cat", "Shared"], db: db).out == "v1\nfrom the mount\n")
        let kept = edit.stderr.split(separator: " ").map {
            String($0).trimmingCharacters(in: .whitespacesAndNewlines.union(CharacterSet(charactersIn: "'\":,()")))
        }
        .first { $0.hasPrefix("/") && FileManager.default.fileExists(atPath: $0) }
        #expect(kept.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) } == "from note edit\n", "stderr: \(edit.stderr)")
    }

    @Test func aChangeByTheCLIWhileTheMountHasTheFileDirtyFailsTheMountsClose() throws {
        let db = makeDatabasePath("stale")
        #expect(try notesfs(["note", "new", "Draft", "--text", "v1\n"], db: db).status == 0)
        let mount = try ChildMount(databasePath: db)
        defer { mount.close() }
        let file = mount.path + "/Draft.md"
        #expect(eventually { access(file, F_OK) == 0 })
        let fd = open(file, O_WRONLY | O_APPEND)
        #expect(fd >= 0)
        let line = "written in the mount\n"
        #expect(write(fd, line, line.utf8.count) == line.utf8.count)
        // Change it through the store directly: starting a child process here would close (and so
        // flush, which saves) the inherited descriptor in the child.
        let store = try RecordDatabase(path: db, create: false, backgroundThread: false)
        var note = try #require(store.queryMetadata(Query(recordType: "Note")).first).record
        note = try store.record(for: note.recordID)
        note["text"] = "changed by the CLI\n"
        try store.modify(saving: [note])
        // The mount's save meets the newer record: close reports it and the CLI's change stays.
        let closed = close(fd)
        let code = errno
        #expect(closed == -1)
        #expect(code == ESTALE)
        #expect(try notesfs(["note", "cat", "Draft"], db: db).out == "changed by the CLI\n")
    }

    /// What an fstab line `DB MNT fuse.notesfs defaults 0 0` does: mount(8) runs `mount.fuse3`,
    /// which runs `notesfs DB MNT -o OPTIONS` (daemonising). Run mount.fuse3 directly, with the
    /// built binary on PATH (mount(8) resets PATH).
    @Test func anFstabStyleMountThroughMountFuse3() throws {
        let db = makeDatabasePath("fstab")
        #expect(try notesfs(["note", "new", "From fstab", "--text", "mounted by mount.fuse3\n"], db: db).status == 0)
        try #require(access("/sbin/mount.fuse3", X_OK) == 0, "mount.fuse3 is missing (package fuse3, scripts/deps.sh)")
        let mountpoint = makeTemporaryDirectory("fstab-mnt")
        let binDirectory = (notesfsBinary as NSString).deletingLastPathComponent
        let path = binDirectory + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        // posix_spawn + waitpid, not Process: Process also waits for the daemon the helper leaves behind.
        let mounted = spawnAndWait(
            "/sbin/mount.fuse3", [db, mountpoint, "-t", "notesfs", "-o", "defaults,rw,dev,suid,nofail,_netdev"], path: path)
        #expect(mounted == 0)
        #expect(eventually { (try? String(contentsOfFile: mountpoint + "/From fstab.md", encoding: .utf8)) == "mounted by mount.fuse3\n" })
        let mounts = String(decoding: FileHandle(forReadingAtPath: "/proc/self/mounts")?.readDataToEndOfFile() ?? Data(), as: UTF8.self)
        #expect(mounts.contains("\(mountpoint) fuse.notesfs"))
        #expect(spawnAndWait("/bin/umount", [mountpoint], path: path) == 0)
        #expect(
            eventually {
                !(String(decoding: FileHandle(forReadingAtPath: "/proc/self/mounts")?.readDataToEndOfFile() ?? Data(), as: UTF8.self))
                    .contains(mountpoint + " ")
            })
        rmdir(mountpoint)
    }

    /// Runs a program with `posix_spawn` and waits for it alone; returns its exit status.
    func spawnAndWait(_ executable: String, _ arguments: [String], path: String) -> Int32 {
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = [strdup("PATH=" + path), nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid: pid_t = 0
        guard posix_spawn(&pid, executable, nil, nil, argv, envp) == 0 else { return -1 }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return (status >> 8) & 0xff
    }

    /// `-o allow_other` lets other users in, and the kernel still enforces the modes
    /// (`default_permissions`): another user reads a 644 note but cannot create in a 755 root.
    @Test(.enabled(if: getuid() == 0 && access("/bin/su", X_OK) == 0, "needs root and su to switch users"))
    func allowOtherAndPermissionsForAnotherUser() throws {
        let db = makeDatabasePath("other")
        #expect(try notesfs(["note", "new", "Shared", "--text", "for everyone\n"], db: db).status == 0)
        let mount = try ChildMount(databasePath: db, arguments: ["-o", "allow_other"])
        defer { mount.close() }
        chmod(mount.path, 0o755)
        let read = try run("/bin/su", ["nobody", "-s", "/bin/sh", "-c", "cat '\(mount.path)/Shared.md'"])
        #expect(read.status == 0, "\(read.stderr)")
        #expect(read.out == "for everyone\n")
        let write = try run("/bin/su", ["nobody", "-s", "/bin/sh", "-c", "echo x > '\(mount.path)/Theirs.md'"])
        #expect(write.status != 0)
        #expect(write.stderr.contains("Permission denied"))
        #expect(access(mount.path + "/Theirs.md", F_OK) != 0)
    }
}
