// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "notesfs",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "notesfs", targets: ["notesfs"]),
        .library(name: "RecordStore", targets: ["RecordStore"]),
        .library(name: "Notes", targets: ["Notes"]),
    ],
    targets: [
        // C boundary: libfuse3 through pkg-config (Debian: libfuse3-dev).
        .systemLibrary(
            name: "CFuse",
            pkgConfig: "fuse3",
            providers: [.apt(["libfuse3-dev"])]
        ),
        // C boundary: libcrypto (SHA-256 of assets; AES-256-GCM, HMAC and scrypt of encrypted
        // sync), its headers only (Debian: libssl-dev): the record store loads libcrypto.so.3 when
        // it first hashes, the sync engine when it first encrypts (not through pkg-config, whose
        // `-lcrypto` would link it and make every command load it at start).
        .systemLibrary(
            name: "CCrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        // C boundary: libpq (the PostgreSQL client), its header only (Debian: libpq-dev): the
        // Postgres module loads libpq.so.5 when it first connects, so that a command which never
        // syncs does not load it (and the 21 libraries it needs) at start. Not through
        // pkg-config, whose `-lpq` would link it.
        .systemLibrary(
            name: "CPostgres",
            providers: [.apt(["libpq-dev"])]
        ),
        // C boundary: SQLite with FTS5 (the derived full-text index) through pkg-config (Debian: libsqlite3-dev).
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // C boundary: glibc's <sys/xattr.h> (import and export of extended attributes).
        .systemLibrary(name: "CXattr"),
        // Every module's system calls on files: EINTR retried, whole reads and writes, atomic
        // durable replacement, directory fsync, the one name → file name encoding. Glibc only.
        .target(name: "POSIX"),
        // The one Swift wrapper of SQLite's C API: the store's metadata index and the text index.
        .target(name: "SQLite", dependencies: ["CSQLite"]),
        .target(
            name: "RecordStore",
            dependencies: ["POSIX", "CCrypto", "SQLite"]),
        .target(name: "Index", dependencies: ["RecordStore", "SQLite", "CSQLite"]),
        .target(name: "Notes", dependencies: ["RecordStore", "Index"]),
        .target(name: "FUSE", dependencies: ["CFuse", "POSIX"]),
        .target(name: "NotesFS", dependencies: ["Notes", "FUSE", "POSIX"]),
        .target(name: "Postgres", dependencies: ["CPostgres", "POSIX"]),
        .target(name: "Sync", dependencies: ["Notes", "RecordStore", "Postgres", "POSIX", "CCrypto"]),
        .target(name: "NotesCLI", dependencies: ["NotesFS", "Notes", "RecordStore", "FUSE", "Sync", "Index", "CXattr", "POSIX"]),
        .executableTarget(name: "notesfs", dependencies: ["NotesCLI"]),

        // A child process for the store's crash and multi-process tests (killed with SIGKILL).
        .executableTarget(
            name: "recordstore-stress", dependencies: ["RecordStore"], path: "Tests/Support/recordstore-stress"),
        // scripts/bench.sh store: figures for the record store at 100,000 notes.
        .executableTarget(name: "store-bench", dependencies: ["RecordStore", "Notes", "Index"], path: "Benchmarks/store-bench"),
        // What every test target shares: tags and the conditions that skip a test that cannot run,
        // a seeded generator, `eventually`, the program runner and the `notesfs` binary, a child
        // mount, a throwaway PostgreSQL server.
        .target(name: "TestSupport", dependencies: ["FUSE", "RecordStore", "Postgres"], path: "Tests/TestSupport"),
        .testTarget(name: "POSIXTests", dependencies: ["POSIX"]),
        .testTarget(name: "RecordStoreTests", dependencies: ["RecordStore", "recordstore-stress", "TestSupport"]),
        .testTarget(name: "NotesTests", dependencies: ["Notes", "Index", "RecordStore", "TestSupport"]),
        .testTarget(name: "FUSETests", dependencies: ["FUSE", "CFuse", "TestSupport"]),
        .testTarget(name: "NotesFSTests", dependencies: ["NotesFS", "Notes", "FUSE", "Index", "TestSupport"]),
        .testTarget(name: "NotesCLITests", dependencies: ["NotesCLI", "Notes", "RecordStore", "TestSupport"]),
        .testTarget(name: "SyncTests", dependencies: ["Sync", "Postgres", "Notes", "RecordStore", "notesfs", "TestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
