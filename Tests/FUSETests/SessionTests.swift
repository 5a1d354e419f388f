/// Mount tests for the session itself: init/destroy, invalidation, refusing mountpoints, watchdog.

import FUSE
import Foundation
import Glibc
import Testing

@Suite struct SessionTests {
    @Test func initializeAndDestroyAreCalled() throws {
        let fileSystem = MemoryFileSystem()
        var mounted = false
        try withMount(fileSystem) { mount, root in
            mounted = true
            #expect(statOf(root).1 == 0)
            #expect(fileSystem.initialized)
            #expect(!fileSystem.destroyed)
            #expect(Mountpoint.isMountpoint(root))
            let info = try String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8)
            #expect(info.contains(" \(root) ") && info.contains("fuse.notesfs"))
            _ = mount
        }
        if mounted { #expect(fileSystem.destroyed) }
    }

    /// Same-size content change: the page cache keeps the old bytes until invalidateInode.
    @Test func invalidateInodeShowsNewContent() throws {
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

    @Test func invalidateEntryOfUncachedNameIsHarmless() throws {
        try withMount { mount, _ in
            #expect(throws: Never.self) {
                try mount.notifier.invalidateEntry(parent: Attributes.rootInode, name: "never-looked-up")
            }
        }
    }

    @Test func refusesLiveAndMissingMountpoints() throws {
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

    @Test func watchdogAbortsAHungHandler() throws {
        let fileSystem = MemoryFileSystem()
        let directory = makeTemporaryDirectory()
        defer { rmdir(directory) }
        guard InProcessMount.isFUSEDeviceUsable,
            let mount = try? InProcessMount(fileSystem: fileSystem, at: directory)
        else {
            #expect(!fuseRequired, "FUSE is required but mounting failed")
            return
        }
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
