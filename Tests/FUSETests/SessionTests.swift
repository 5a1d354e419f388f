/// Mount tests for the session itself: init/destroy, invalidation, refusing mountpoints, watchdog.

import FUSE
import Foundation
import Glibc
import TestSupport
import Testing

@Suite struct SessionTests {
    @Test(.tags(.mount), .needsFUSE) func initializeAndDestroyAreCalled() throws {
        let fileSystem = MemoryFileSystem()
        var mounted = false
        try withMount(fileSystem) { mount, root in
            mounted = true
            #expect(statOf(root).1 == 0)
            #expect(fileSystem.initialized)
            #expect(!fileSystem.destroyed)
            #expect(Mountpoint.isMountpoint(root))
            let info = String(
                decoding: FileHandle(forReadingAtPath: "/proc/self/mountinfo")?.readDataToEndOfFile() ?? Data(), as: UTF8.self)
            #expect(info.contains(" \(root) ") && info.contains("fuse.notesfs"))
            _ = mount
        }
        if mounted { #expect(fileSystem.destroyed) }
    }

    /// Same-size content change: the page cache keeps the old bytes until invalidateInode.
    @Test(.tags(.mount), .needsFUSE) func invalidateInodeShowsNewContent() throws {
        let fileSystem = MemoryFileSystem(timeout: 300)
        try withMount(fileSystem) { mount, root in
            let path = root + "/cached"
            #expect(writeFile(path, "AAAA") == 0)
            #expect(readFile(path) == "AAAA")
            let inode = try #require(fileSystem.inode(named: "cached"))
            fileSystem.replaceContent(inode, with: Array("BBBB".utf8))
            #expect(readFile(path) == "AAAA", "expected the kernel to serve cached bytes")
            try mount.notifier.invalidateInode(inode)
            #expect(readFile(path) == "BBBB")
        }
    }

    @Test(.tags(.mount), .needsFUSE) func invalidateEntryOfUncachedNameIsHarmless() throws {
        try withMount { mount, _ in
            #expect(throws: Never.self) {
                try mount.notifier.invalidateEntry(parent: Attributes.rootInode, name: "never-looked-up")
            }
        }
    }

    @Test(.tags(.mount), .needsFUSE) func refusesLiveAndMissingMountpoints() throws {
        try withMount { _, root in
            #expect(throws: FUSEError.alreadyMounted(root)) {
                _ = try InProcessMount(fileSystem: MemoryFileSystem(), at: root)
            }
        }
        let parent = makeTemporaryDirectory()
        defer { rmdir(parent) }
        let missing = parent + "/missing"
        #expect(throws: FUSEError.mountpointMissing(missing)) {
            _ = try Mountpoint.validate(missing)
        }
    }

    /// Requests that take long do not hold up the others: the loop's leader hands the reading to
    /// another worker (a new one for each, here) while it is held up. Three lookups wait until
    /// released; a file is read and written meanwhile.
    @Test(.tags(.mount), .needsFUSE) func slowRequestsDoNotHoldUpTheOthers() throws {
        let fileSystem = MemoryFileSystem()
        try withMount(fileSystem) { _, root in
            // In a directory of its own: the kernel holds the root locked while a lookup in it runs.
            // (and each slow lookup in a directory of its own, for the same reason).
            for name in ["d", "h0", "h1", "h2"] { #expect(mkdir(root + "/" + name, 0o755) == 0) }
            #expect(writeFile(root + "/d/other", "x") == 0)
            let finished = DispatchSemaphore(value: 0)
            for i in 0..<3 {
                Thread {
                    _ = statOf(root + "/h\(i)/hang")
                    finished.signal()
                }.start()
            }
            for _ in 0..<10_000 where fileSystem.hangsStarted < 3 { usleep(1_000) }
            #expect(fileSystem.hangsStarted == 3)
            #expect(readFile(root + "/d/other") == "x")
            #expect(writeFile(root + "/d/more", "y") == 0)
            #expect(readFile(root + "/d/more") == "y")
            #expect(finished.wait(timeout: .now()) == .timedOut, "the slow lookups were still waiting")
            for _ in 0..<3 { fileSystem.releaseHang() }
            for _ in 0..<3 { #expect(finished.wait(timeout: .now() + 20) == .success) }
        }
    }

    /// A bind mount is on its parent's device: only /proc/self/mountinfo tells it is a mountpoint,
    /// and with many mounts its line is past the file's first 4 KiB.
    @Test(.tags(.mount), .notInFastRuns) func aBindMountPastTheFirstPageOfMountinfoIsAMountpoint() throws {
        let base = makeTemporaryDirectory("mounts")
        defer { rmdir(base) }
        var mounted: [String] = []
        defer {
            for point in mounted.reversed() { _ = try? run(["/bin/umount", point]) }
            for i in 0..<41 { rmdir(base + "/\(i)") }
            rmdir(base + "/source")
        }
        for i in 0..<40 {
            #expect(mkdir(base + "/\(i)", 0o700) == 0)
            try #require(try run(["/bin/mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", base + "/\(i)"]) == 0)
            mounted.append(base + "/\(i)")
        }
        #expect(mkdir(base + "/source", 0o700) == 0)
        #expect(mkdir(base + "/40", 0o700) == 0)
        let target = try #require(
            realpath(base + "/40", nil).map { path in
                defer { free(path) }
                return String(cString: path)
            })
        #expect(!Mountpoint.isMountpoint(target))
        try #require(try run(["/bin/mount", "--bind", base + "/source", target]) == 0)
        mounted.append(target)
        let info = FileHandle(forReadingAtPath: "/proc/self/mountinfo")?.readDataToEndOfFile() ?? Data()
        #expect(info.count > 4096)
        #expect(Mountpoint.isMountpoint(target))
        #expect(throws: FUSEError.self) { try Mountpoint.validate(target) }
    }

    /// Runs a program; its exit status.
    private func run(_ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }

    @Test(.tags(.mount), .needsFUSE) func watchdogAbortsAHungHandler() throws {
        let fileSystem = MemoryFileSystem()
        let directory = makeTemporaryDirectory()
        defer { rmdir(directory) }
        let mount = try InProcessMount(fileSystem: fileSystem, at: directory)
        let watchdog = mount.watchdog(seconds: 0.5)
        let start = Date()
        let result = statOf(mount.mountpoint + "/hang").1
        #expect(watchdog.fired)
        #expect(result == ENOTCONN || result == ECONNABORTED, "errno \(result)")
        #expect(Date().timeIntervalSince(start) < 10)
        fileSystem.releaseHang()
        #expect(throws: Never.self) { try mount.unmount() }
    }
}
