/// The mount's read-only `.history/` through a real mount: the versions of a note as
/// files named by date, with their bytes and mtime, that `cat`, `diff` and `cp` read; deleted
/// notes; binary bytes; hidden from the root's listing; `EROFS` for every change.

import CFuse
import Foundation
import Glibc
import Notes
import RecordStore
import TestSupport
import Testing

@testable import NotesFS

/// 2026-12-03T08:00:00Z.
private let morning = Date(timeIntervalSince1970: 1_796_284_800)

/// Sets the mtime of `path` (a metadata change: it keeps no version) to `date`.
private func setModificationTime(_ path: String, _ date: Date) -> Int32 {
    var times = [
        timespec(tv_sec: Int(date.timeIntervalSince1970), tv_nsec: 0),
        timespec(tv_sec: Int(date.timeIntervalSince1970), tv_nsec: 0),
    ]
    return errnoOf { utimensat(AT_FDCWD, path, &times, 0) }
}

/// Saves `texts` to `path` in turn through the mount, the note dated `dates[i]` before save
/// `i + 1`: with every save keeping a version, version `i` holds `texts[i]` dated `dates[i]`.
private func saveVersions(_ path: String, _ texts: [[UInt8]], dates: [Date]) {
    for (index, bytes) in texts.enumerated() {
        #expect(writeBytes(path, bytes) == 0)
        if index < dates.count { #expect(setModificationTime(path, dates[index]) == 0) }
    }
}

/// A seed that keeps a version at every save (no coalescing).
private func everySave(_ database: RecordDatabase) {
    VersionHistory.install(on: database, settings: HistorySettings(interval: 0))
}

@Suite struct HistoryDirectoryTests {
    @Test(.tags(.mount), .needsFUSE) func versionsAreFilesNamedByDateWithTheirBytesAndMtime() throws {
        try withNotesMount(seed: everySave) { m in
            #expect(mkdir(m.path("Work"), 0o755) == 0)
            let dates = [morning, morning + 5400]
            saveVersions(m.path("Work/Plan.md"), [Array("v1\n".utf8), Array("v2 longer\n".utf8), Array("v3 now\n".utf8)], dates: dates)
            #expect(listing(m.path(".history")) == ["Work"])
            #expect(listing(m.path(".history/Work")) == ["Plan.md"])
            let names = ["2026-12-03T08-00-00.md", "2026-12-03T09-30-00.md"]
            #expect(listing(m.path(".history/Work/Plan.md")) == names)
            #expect(readFile(m.path(".history/Work/Plan.md/" + names[0])) == "v1\n")
            #expect(readFile(m.path(".history/Work/Plan.md/" + names[1])) == "v2 longer\n")
            for (name, date) in zip(names, dates) {
                let st = try #require(statOf(m.path(".history/Work/Plan.md/" + name)).0)
                #expect(st.st_mode == S_IFREG | 0o444)
                #expect(st.st_mtim.tv_sec == Int(date.timeIntervalSince1970))
            }
            #expect(statOf(m.path(".history/Work/Plan.md/" + names[1])).0?.st_size == 10)
            let directory = try #require(statOf(m.path(".history/Work/Plan.md")).0)
            #expect(directory.st_mode == S_IFDIR | 0o555)
            // diff against the note itself, and cp out (with the date).
            let diff = try sh("diff .history/Work/Plan.md/\(names[0]) Work/Plan.md", in: m.root)
            #expect(diff.status == 1, "\(diff)")
            #expect(diff.out == "1c1\n< v1\n---\n> v3 now\n")
            let out = makeTemporaryDirectory("notesfshistory")
            defer { try? FileManager.default.removeItem(atPath: out) }
            let copy = try sh("cp -p .history/Work/Plan.md/\(names[1]) \(shellQuoted(out))/old.md", in: m.root)
            #expect(copy.status == 0, "\(copy)")
            #expect(readFile(out + "/old.md") == "v2 longer\n")
            #expect(statOf(out + "/old.md").0?.st_mtim.tv_sec == Int(dates[1].timeIntervalSince1970))
            // The current text is the note itself: a new save adds its old text as a version, at once.
            #expect(writeFile(m.path("Work/Plan.md"), "v4\n") == 0)
            let now = try #require(listing(m.path(".history/Work/Plan.md")))
            #expect(now.count == 3)
            #expect(now.last.map { readFile(m.path(".history/Work/Plan.md/" + $0)) } == "v3 now\n")
            // A moved note's versions follow it.
            #expect(rename(m.path("Work/Plan.md"), m.path("Moved.md")) == 0)
            #expect(listing(m.path(".history")) == ["Moved.md"])
            #expect(listing(m.path(".history/Moved.md")) == now)
            #expect(statOf(m.path(".history/Work")).1 == ENOENT)
        }
    }

    @Test(.tags(.mount), .needsFUSE) func versionsOfOneSecondTakeCountersInTheOrderTheyWereMade() throws {
        try withNotesMount(seed: everySave) { m in
            saveVersions(m.path("Plan.md"), ["a", "b", "c", "d"].map { Array($0.utf8) }, dates: [morning, morning, morning])
            let names = ["2026-12-03T08-00-00-1.md", "2026-12-03T08-00-00-2.md", "2026-12-03T08-00-00-3.md"]
            #expect(listing(m.path(".history/Plan.md")) == names)
            let sorted = try sh("LC_ALL=C ls .history/Plan.md", in: m.root)
            #expect(sorted.out == names.joined(separator: "\n") + "\n")
            #expect(names.map { readFile(m.path(".history/Plan.md/" + $0)) } == ["a", "b", "c"])
        }
    }

    @Test(.tags(.mount), .needsFUSE) func deletedNotesKeepTheirPathsOrGoToRecovered() throws {
        try withNotesMount(seed: everySave) { m in
            #expect(mkdir(m.path("Old"), 0o755) == 0)
            saveVersions(m.path("Gone.md"), [Array("first\n".utf8), Array("last\n".utf8)], dates: [morning, morning + 60])
            saveVersions(m.path("Old/Inner.md"), [Array("inner\n".utf8), Array("inner 2\n".utf8)], dates: [morning + 120])
            #expect(unlink(m.path("Gone.md")) == 0)
            // Deleted: listed at its path, with the text it had when deleted.
            #expect(listing(m.path(".history")) == ["Gone.md", "Old"])
            #expect(listing(m.path(".history/Gone.md")) == ["2026-12-03T08-00-00.md", "2026-12-03T08-01-00.md"])
            #expect(readFile(m.path(".history/Gone.md/2026-12-03T08-01-00.md")) == "last\n")
            // A new note of the same name keeps the name; the deleted one takes a suffix.
            saveVersions(m.path("Gone.md"), [Array("new\n".utf8), Array("newer\n".utf8)], dates: [morning + 3600])
            let root = try #require(listing(m.path(".history")))
            #expect(root.count == 3)
            #expect(root.contains("Gone.md"))
            #expect(listing(m.path(".history/Gone.md")) == ["2026-12-03T09-00-00.md"])
            let suffixed = try #require(root.first { $0.hasPrefix("Gone (") && $0.hasSuffix(").md") })
            #expect(listing(m.path(".history/" + suffixed))?.count == 2)
            // A folder deleted with its note: the note's versions go to Recovered.
            #expect(unlink(m.path("Old/Inner.md")) == 0)
            #expect(rmdir(m.path("Old")) == 0)
            #expect(listing(m.path(".history"))?.contains("Recovered") == true)
            #expect(listing(m.path(".history"))?.contains("Old") == false)
            #expect(listing(m.path(".history/Recovered")) == ["Inner.md"])
            // Its versions: the first save's, and the text it had when deleted (dated by that save).
            let inner = try #require(listing(m.path(".history/Recovered/Inner.md")))
            #expect(inner.count == 2)
            #expect(inner.first == "2026-12-03T08-02-00.md")
            #expect(readFile(m.path(".history/Recovered/Inner.md/2026-12-03T08-02-00.md")) == "inner\n")
        }
    }

    @Test(.tags(.mount), .needsFUSE) func binaryVersionsReadBackByteForByte() throws {
        try withNotesMount(seed: everySave) { m in
            // Not UTF-8, and larger than one read: kept as an asset.
            let binary = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 9) } + [0xff, 0xfe, 0x00]
            saveVersions(m.path("Blob.md"), [binary, Array("text now\n".utf8)], dates: [morning])
            saveVersions(m.path("photo.png"), [[0x89, 0x50, 0x4e, 0x47, 0x00, 0xff], [0x89]], dates: [morning])
            #expect(readBytes(m.path(".history/Blob.md/2026-12-03T08-00-00.md")) == binary)
            #expect(statOf(m.path(".history/Blob.md/2026-12-03T08-00-00.md")).0?.st_size == binary.count)
            let cmp = try sh("cmp .history/Blob.md/2026-12-03T08-00-00.md Blob.md", in: m.root)
            #expect(cmp.status == 1, "they differ: \(cmp)")
            // An attachment's versions keep its extension.
            #expect(listing(m.path(".history/photo.png")) == ["2026-12-03T08-00-00.png"])
            #expect(readBytes(m.path(".history/photo.png/2026-12-03T08-00-00.png")) == [0x89, 0x50, 0x4e, 0x47, 0x00, 0xff])
        }
    }

    /// A version whose bytes cannot be made (a delta whose base is gone) is an I/O error to
    /// read, not a missing file.
    @Test(.tags(.mount), .needsFUSE) func aDamagedVersionReadsAsAnIOError() throws {
        try withNotesMount(seed: everySave) { m in
            saveVersions(m.path("Plan.md"), [Array("v1\n".utf8), Array("v2\n".utf8)], dates: [morning])
            let plan = try #require(recordName(m.path("Plan.md")))
            var damaged = Record(recordType: Version.recordType, recordID: RecordID(recordName: "damaged-delta"))
            damaged["note"] = .string(plan)
            damaged["noteType"] = .string(Note.recordType)
            damaged["title"] = .string("Plan")
            damaged["date"] = .date(morning + 3600)
            damaged["kind"] = .string("edit")
            damaged["deltaBase"] = .string("gone")
            damaged["deltaPrefix"] = .int64(0)
            damaged["deltaSuffix"] = .int64(0)
            damaged["deltaText"] = .string("x")
            try m.database.modify(saving: [damaged])
            let path = m.path(".history/Plan.md/2026-12-03T09-00-00.md")
            #expect(eventually(5) { statOf(path).0 != nil })
            let failure = errnoOf {
                let fd = open(path, O_RDONLY | O_CLOEXEC)
                guard fd >= 0 else { return -1 }
                defer { close(fd) }
                var byte: UInt8 = 0
                return read(fd, &byte, 1) < 0 ? -1 : 0
            }
            #expect(failure == EIO)
        }
    }

    @Test(.tags(.mount), .needsFUSE) func hiddenFromTheRootAndReadOnly() throws {
        try withNotesMount(seed: everySave) { m in
            saveVersions(m.path("Plan.md"), [Array("v1\n".utf8), Array("v2\n".utf8)], dates: [morning])
            let all = try sh("ls -a", in: m.root)
            #expect(all.out.split(separator: "\n").map(String.init) == [".", "..", "Plan.md"])
            let dir = m.path(".history/Plan.md")
            let file = dir + "/2026-12-03T08-00-00.md"
            #expect(errnoOf { open(file, O_WRONLY | O_CLOEXEC) } == EROFS)
            #expect(errnoOf { open(file, O_RDWR | O_CLOEXEC) } == EROFS)
            #expect(errnoOf { open(file, O_WRONLY | O_APPEND | O_CLOEXEC) } == EROFS)
            #expect(errnoOf { open(dir + "/new.md", O_CREAT | O_WRONLY | O_CLOEXEC, 0o644) } == EROFS)
            #expect(errnoOf { truncate(file, 0) } == EROFS)
            #expect(errnoOf { unlink(file) } == EROFS)
            #expect(renameErrno(file, dir + "/other.md") == EROFS)
            #expect(renameErrno(file, m.path("Restored.md")) == EROFS)
            #expect(renameErrno(m.path("Plan.md"), dir + "/Plan.md") == EROFS)
            #expect(setModificationTime(file, morning) == EROFS)
            #expect(errnoOf { chmod(file, 0o644) } == EROFS)
            #expect(errnoOf { setxattr(file, "user.x", "v", 1, 0) } == EROFS)
            #expect(errnoOf { mkdir(m.path(".history/New"), 0o755) } == EROFS)
            #expect(errnoOf { rmdir(dir) } == EROFS)
            #expect(errnoOf { link(file, m.path("hard.md")) } == EROFS)
            // Nothing changed: the version reads as before, the note is as it was.
            #expect(readFile(file) == "v1\n")
            #expect(readFile(m.path("Plan.md")) == "v2\n")
            #expect(listing(m.path(".history/Plan.md")) == ["2026-12-03T08-00-00.md"])
            #expect(statOf(dir + "/2026-12-03T08-00-01.md").1 == ENOENT)
        }
    }

    @Test(.tags(.mount), .needsFUSE) func aChangeByAnotherProcessShowsInTheListing() throws {
        try withNotesMount(seed: everySave) { m in
            saveVersions(m.path("Plan.md"), [Array("v1\n".utf8), Array("v2\n".utf8)], dates: [morning])
            #expect(listing(m.path(".history/Plan.md")) == ["2026-12-03T08-00-00.md"])
            // Another process (its own database instance) saves the note: a version of v2.
            let other = try openDatabase(m.databasePath)
            VersionHistory.install(on: other, settings: HistorySettings(interval: 0))
            let id = try #require(note(m.database, titled: "Plan")).recordID
            var record = try other.record(for: id)
            record["text"] = .string("v3\n")
            _ = try other.modify(saving: [record])
            try other.close()
            // As for .recent and .search: opendir catches up first, but a commit the store's
            // watcher is delivering meanwhile shows within its second.
            #expect(eventually(5) { listing(m.path(".history/Plan.md"))?.count == 2 }, "\(listing(m.path(".history/Plan.md")) ?? [])")
            #expect(readFile(m.path(".history/Plan.md/2026-12-03T08-00-00.md")) == "v1\n")
        }
    }

    @Test func versionFileNamesAreUTCStampsNumberedWithinASecond() {
        let names = VersionFileNames.names([morning, morning + 0.5, morning + 1, morning + 1.2, morning + 1.9], fileExtension: ".md")
        #expect(
            names == [
                "2026-12-03T08-00-00-1.md", "2026-12-03T08-00-00-2.md", "2026-12-03T08-00-01-1.md", "2026-12-03T08-00-01-2.md",
                "2026-12-03T08-00-01-3.md",
            ])
        #expect(VersionFileNames.stamp(Date(timeIntervalSince1970: -1)) == "1969-12-31T23-59-59")
        #expect(VersionFileNames.stamp(Date(timeIntervalSince1970: 0)) == "1970-01-01T00-00-00")
        #expect(VersionFileNames.stamp(Date(timeIntervalSince1970: 1e300)) == "0000-00-00T00-00-00", "a damaged date")
        #expect(VersionFileNames.stamp(Date(timeIntervalSince1970: .nan)) == "0000-00-00T00-00-00")
        #expect(VersionFileNames.fileExtension(of: "Plan.md") == ".md")
        #expect(VersionFileNames.fileExtension(of: "arch.tar.gz") == ".tar.gz", "a compressed archive keeps both parts")
        #expect(VersionFileNames.fileExtension(of: "dump.sql.zst") == ".sql.zst")
        #expect(VersionFileNames.fileExtension(of: "Notes v1.2.md") == ".md")
        #expect(VersionFileNames.fileExtension(of: "x.gz") == ".gz")
        #expect(VersionFileNames.fileExtension(of: "README") == "")
        #expect(VersionFileNames.fileExtension(of: ".profile") == "")
        #expect(VersionFileNames.fileExtension(of: "trailing.") == "")
    }

    /// Past nine versions in one second the counter is padded: `ls` (byte order) lists them in
    /// the order they were made.
    @Test func versionsOfOneSecondSortAsMadePastNine() {
        let first: [Date] = (0..<12).map { (i: Int) -> Date in morning.addingTimeInterval(Double(i) / 100) }
        let second: [Date] = (0..<3).map { (i: Int) -> Date in morning.addingTimeInterval(1 + Double(i) / 10) }
        let dates = first + second
        let names = VersionFileNames.names(dates, fileExtension: ".md")
        #expect(names.sorted() == names, "\(names)")
        #expect(Set(names).count == names.count)
        #expect(names[0] == "2026-12-03T08-00-00-01.md" && names[11] == "2026-12-03T08-00-00-12.md")
        #expect(names[12] == "2026-12-03T08-00-01-1.md", "a second of fewer than ten keeps one digit")
    }

    /// Lists a note's 1,000 versions (made in the store directly) and prints how long `ls` and
    /// `ls -l` took: measured, not asserted.
    /// Its watchdog (which catches a hung request, not a slow one) allows 300 s: the listings and
    /// stats it times are some 30,000 requests, 3-8 s per `ls -l` on a loaded 2-core machine, and
    /// beside a build the 60 s default fired while every request was answered.
    @Test(.tags(.mount), .needsFUSE) func aThousandVersionsAreListed() throws {
        try withNotesMount(
            timeout: 300,
            seed: { db in
                everySave(db)
                let note = try saveNote(db, title: "Plan", text: "now")
                var versions: [Record] = []
                for index in 0..<1000 {
                    var replaced = note.record
                    replaced["text"] = .string("version \(index)\n")
                    replaced.modificationDate = morning + Double(index) * 60
                    versions.append(Version(of: replaced, kind: .edit).record)
                }
                _ = try db.modify(saving: versions)
            }
        ) { m in
            let names = try #require(listing(m.path(".history/Plan.md")))
            #expect(names.count == 1000)
            #expect(names.first == "2026-12-03T08-00-00.md")
            #expect(readFile(m.path(".history/Plan.md/" + names[999])) == "version 999\n")
            // In this process: readdir alone, then readdir and a stat of each entry (what ls -l asks).
            let directory = m.path(".history/Plan.md")
            var inProcess: [String] = []
            for _ in 0..<5 {
                let start = Date()
                let listed = listing(directory) ?? []
                let listedAt = Date()
                let stated = listed.filter { statOf(directory + "/" + $0).0 != nil }.count
                inProcess.append(
                    String(format: "%.1f/%.1f", listedAt.timeIntervalSince(start) * 1000, Date().timeIntervalSince(start) * 1000))
                #expect(stated == 1000)
            }
            print("measured: readdir/readdir+stat of .history/Plan.md at 1,000 versions: \(inProcess) ms")
            for command in ["ls", "ls -l"] {
                var times: [Double] = []
                for _ in 0..<5 {
                    let start = Date()
                    let result = try sh("\(command) .history/Plan.md > /dev/null", in: m.root)
                    times.append(Date().timeIntervalSince(start) * 1000)
                    #expect(result.status == 0)
                }
                print("measured: \(command) .history/Plan.md at 1,000 versions: \(times.map { String(format: "%.1f", $0) }) ms")
            }
        }
    }
}
