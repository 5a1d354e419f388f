/// Test helpers for the notes mount: a tmpfs for the conformance runs, the in-process mount over a
/// database of its own (watchdog), errno-returning system call wrappers, and looking records up in
/// the store. (Shared helpers, such as the program runner and the child mount, are in TestSupport.)

import CFuse
import FUSE
import Foundation
import Glibc
import Notes
import NotesFS
import RecordStore
import TestSupport
import Testing

/// Runs `body` with a tmpfs mounted (`mount -o OPTIONS`) on a fresh directory named after
/// `prefix`; unmounts it and removes the directory after.
func withTmpfs<T>(
    _ prefix: String, options: String, sourceLocation: SourceLocation = #_sourceLocation, _ body: (String) throws -> T
) throws -> T {
    let point = try mountTmpfs(prefix, options: options, sourceLocation: sourceLocation)
    defer { removeTmpfs(point) }
    return try body(point)
}

/// ``withTmpfs(_:options:sourceLocation:_:)`` for an `async` body.
func withTmpfs<T>(
    _ prefix: String, options: String, sourceLocation: SourceLocation = #_sourceLocation, _ body: (String) async throws -> T
) async throws -> T {
    let point = try mountTmpfs(prefix, options: options, sourceLocation: sourceLocation)
    defer { removeTmpfs(point) }
    return try await body(point)
}

private func mountTmpfs(_ prefix: String, options: String, sourceLocation: SourceLocation) throws -> String {
    let point = makeTemporaryDirectory(prefix)
    let mounted = try run(["/bin/mount", "-t", "tmpfs", "-o", options, "tmpfs", point])
    if mounted.status != 0 { rmdir(point) }
    try #require(mounted.status == 0, "mount tmpfs: \(mounted)", sourceLocation: sourceLocation)
    return point
}

private func removeTmpfs(_ point: String) {
    unmountTmpfs(point)
    rmdir(point)
}

/// Unmounts a test's tmpfs. A database closed just before may still hold its files for a moment
/// (its last reference dropped on another thread): retried for up to 5 s, then detached lazily, so
/// that no mount is left behind (a plain `umount` that found it busy left one per run).
func unmountTmpfs(_ point: String) {
    for _ in 0..<50 {
        if (try? run(["/bin/umount", point]))?.status == 0 { return }
        usleep(100_000)
    }
    _ = try? run(["/bin/umount", "-l", point])
}

/// What a test body gets: the mountpoint and the database the mount serves.
struct NotesMount {
    let mount: InProcessMount
    /// The mounted filesystem, to call an operation without the kernel seeing it.
    let fileSystem: NotesFileSystem
    /// The mountpoint (resolved).
    let root: String
    /// The database the mounted filesystem uses (the same instance: reads are current).
    let database: RecordDatabase
    let databasePath: String

    func path(_ relative: String) -> String { root + "/" + relative }
}

/// Mounts a `NotesFileSystem` over the database at `databasePath` (created if missing; a fresh one
/// when nil) at a new temporary mountpoint and runs `body`. `seed` runs on the database before the
/// mount. A mount that fails is a recorded issue (and false): a test that cannot mount carries
/// `.needsFUSE`, which skips it where FUSE is unusable.
/// A watchdog aborts the connection after `timeout` seconds so that a hung handler fails the test.
/// The filesystem closes the database at unmount: open a new `RecordDatabase` to look afterwards.
/// `storeWatcher` false: the mounted database has no background thread, so the mount hears of
/// other processes' commits only when it catches up by itself (a commit, a refresh), never on a tick.
@discardableResult
func withNotesMount(
    databasePath: String? = nil, options: NotesFileSystem.Options = NotesFileSystem.Options(), mountOptions: [String] = [],
    singleThread: Bool = false, timeout: Double = 60, storeWatcher: Bool = true, sourceLocation: SourceLocation = #_sourceLocation,
    seed: (RecordDatabase) throws -> Void = { _ in },
    _ body: (NotesMount) throws -> Void
) throws -> Bool {
    let setup = MountSetup(
        options: options, mountOptions: mountOptions, singleThread: singleThread, timeout: timeout, storeWatcher: storeWatcher)
    if let databasePath {
        return try mountAndRun(databasePath, setup, sourceLocation, seed, body)
    }
    return try withDatabaseDirectory { path in
        try mountAndRun(path, setup, sourceLocation, seed, body)
    }
}

/// How ``withNotesMount(databasePath:options:mountOptions:singleThread:timeout:storeWatcher:sourceLocation:seed:_:)`` mounts.
private struct MountSetup {
    var options: NotesFileSystem.Options
    var mountOptions: [String]
    var singleThread: Bool
    var timeout: Double
    var storeWatcher: Bool
}

private func mountAndRun(
    _ databasePath: String, _ setup: MountSetup,
    _ sourceLocation: SourceLocation, _ seed: (RecordDatabase) throws -> Void, _ body: (NotesMount) throws -> Void
) throws -> Bool {
    let (options, mountOptions, singleThread, timeout) = (setup.options, setup.mountOptions, setup.singleThread, setup.timeout)
    let database = try RecordDatabase(path: databasePath, create: true, backgroundThread: setup.storeWatcher)
    try seed(database)
    let directory = makeTemporaryDirectory("notesfsmnt")
    defer { rmdir(directory) }
    let mount: InProcessMount
    let fileSystem = NotesFileSystem(database: database, options: options)
    do {
        mount = try InProcessMount(fileSystem: fileSystem, at: directory, options: mountOptions, singleThread: singleThread)
    } catch {
        try? database.close()
        Issue.record("mounting failed: \(error)", sourceLocation: sourceLocation)
        return false
    }
    let watchdog = mount.watchdog(seconds: timeout)
    defer {
        #expect(watchdog.cancel(), "watchdog fired: a request hung", sourceLocation: sourceLocation)
        do { try mount.unmount() } catch { Issue.record("unmount failed: \(error)", sourceLocation: sourceLocation) }
    }
    try body(NotesMount(mount: mount, fileSystem: fileSystem, root: mount.mountpoint, database: database, databasePath: databasePath))
    return true
}

// MARK: - System calls

/// Runs a C call that returns -1 and sets errno on failure; returns 0 on success or the errno.
func errnoOf(_ call: () -> Int32) -> Int32 {
    call() == -1 ? errno : 0
}

/// Writes `bytes` to `path` (created or truncated) with open/pwrite/close; returns the errno or 0.
///
/// The helpers here open with `O_CLOEXEC`: a child another test spawns meanwhile (between its
/// list of descriptors to close and its spawn) must not inherit the descriptor and keep this
/// test's mount busy (`EBUSY` at unmount) for as long as it lives.
@discardableResult
func writeBytes(_ path: String, _ bytes: [UInt8], mode: mode_t = 0o644) -> Int32 {
    let fd = open(path, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, mode)
    if fd < 0 { return errno }
    let written = bytes.isEmpty ? 0 : pwrite(fd, bytes, bytes.count, 0)
    let writeErrno = written == bytes.count ? 0 : errno
    let closeErrno = close(fd) == 0 ? 0 : errno
    return writeErrno != 0 ? writeErrno : closeErrno
}

@discardableResult
func writeFile(_ path: String, _ text: String, mode: mode_t = 0o644) -> Int32 {
    writeBytes(path, Array(text.utf8), mode: mode)
}

/// Reads a whole file with open/pread/close; nil on error.
func readBytes(_ path: String) -> [UInt8]? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    if fd < 0 { return nil }
    defer { close(fd) }
    return readAll(fd)
}

/// Reads from `fd` with pread from offset 0 until end of file; nil on error.
func readAll(_ fd: Int32) -> [UInt8]? {
    var result: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let count = pread(fd, &buffer, buffer.count, off_t(result.count))
        if count < 0 { return nil }
        if count == 0 { break }
        result += buffer[..<count]
    }
    return result
}

func readFile(_ path: String) -> String? {
    readBytes(path).map { String(decoding: $0, as: UTF8.self) }
}

/// A `stat` time in nanoseconds since 1970.
func nanoseconds(_ time: timespec) -> Int { time.tv_sec * 1_000_000_000 + time.tv_nsec }

/// `stat(2)`; nil with the errno on failure.
func statOf(_ path: String) -> (stat?, Int32) {
    var st = stat()
    return stat(path, &st) == 0 ? (st, 0) : (nil, errno)
}

/// `getxattr(2)` as a string; nil on error.
func xattr(_ path: String, _ name: String) -> String? {
    var buffer = [UInt8](repeating: 0, count: 4096)
    let count = getxattr(path, name, &buffer, buffer.count)
    guard count >= 0 else { return nil }
    return String(decoding: buffer[..<count], as: UTF8.self)
}

/// The record name of the file at `path` (its `user.notesfs.recordName` xattr).
func recordName(_ path: String) -> String? { xattr(path, "user.notesfs.recordName") }

/// The entry names of a directory (without `.` and `..`), sorted; nil on error.
func listing(_ path: String) -> [String]? { rawListing(path)?.sorted() }

/// The entry names of a directory in readdir's order (without `.` and `..`); nil on error.
func rawListing(_ path: String) -> [String]? {
    guard let directory = opendir(path) else { return nil }
    defer { closedir(directory) }
    var names: [String] = []
    while let entry = readdir(directory) {
        let name = entryName(entry)
        if name != "." && name != ".." { names.append(name) }
    }
    return names
}

func entryName(_ entry: UnsafeMutablePointer<dirent>) -> String {
    withUnsafePointer(to: &entry.pointee.d_name) {
        String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self))
    }
}

/// `renameat2(2)` with flags (1 = RENAME_NOREPLACE); returns the errno or 0.
func renameErrno(_ from: String, _ to: String, flags: UInt32 = 0) -> Int32 {
    errnoOf { notesfs_renameat2(AT_FDCWD, from, AT_FDCWD, to, flags) }
}

/// Up to `count` bytes of the file at `path` from `offset` (pread); nil on error.
func readRange(_ path: String, offset: Int64, count: Int) -> [UInt8]? {
    let fd = open(path, O_RDONLY)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var bytes = [UInt8](repeating: 0xAA, count: count)
    var done = 0
    while done < count {
        let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, count - done, off_t(offset) + off_t(done)) }
        if n < 0 { return nil }
        if n == 0 { break }
        done += n
    }
    return Array(bytes[..<done])
}

// MARK: - Records

/// Note and Attachment records in the database (for "no stray records").
func fileRecordCount(_ database: RecordDatabase) -> Int {
    database.queryMetadata(Query(recordType: Note.recordType)).count
        + database.queryMetadata(Query(recordType: Attachment.recordType)).count
}

func notes(_ database: RecordDatabase) -> [Note] {
    database.queryMetadata(Query(recordType: Note.recordType)).compactMap {
        (try? database.record(for: $0.recordID)).flatMap { try? Note(record: $0) }
    }
}

func note(_ database: RecordDatabase, recordName: String) -> Note? {
    (try? database.record(for: RecordID(recordName: recordName))).flatMap { try? Note(record: $0) }
}

func note(_ database: RecordDatabase, titled title: String) -> Note? {
    notes(database).first { $0.title == title }
}

/// Saves a note and returns it as stored.
@discardableResult
func saveNote(_ database: RecordDatabase, title: String, text: String = "", folder: RecordID? = nil) throws -> Note {
    try Note(record: database.modify(saving: [Note(title: title, text: text, folder: folder).record]).savedRecords[0])
}

@discardableResult
func saveFolder(_ database: RecordDatabase, name: String, parent: RecordID? = nil) throws -> Folder {
    try Folder(record: database.modify(saving: [Folder(name: name, parent: parent).record]).savedRecords[0])
}

/// Opens the database at `path` (another handle: its own index, caught up from the journal).
func openDatabase(_ path: String) throws -> RecordDatabase {
    try RecordDatabase(path: path, create: false)
}
