/// Note history through the mount: saves, editors' saves, a rename over a note and unlinks keep
/// versions in the store, in the same commit as the change.

import Foundation
import Glibc
import Notes
import RecordStore
import TestSupport
import Testing

@Suite(.tags(.mount), .needsFUSE) struct HistoryMountTests {
    /// A note removed in the mount and undeleted comes back with its mode, owner, group and
    /// modification time, not the defaults.
    @Test func anUndeletedNoteKeepsItsModeOwnerAndTimes() throws {
        try withNotesMount(seed: { VersionHistory.install(on: $0, settings: HistorySettings(interval: 600)) }) { m in
            let path = m.path("Private.md")
            #expect(writeFile(path, "secret\n") == 0)
            #expect(chmod(path, 0o600) == 0)
            #expect(chown(path, 1000, 1001) == 0)
            var times = [timespec(tv_sec: 1_580_000_000, tv_nsec: 0), timespec(tv_sec: 1_580_000_000, tv_nsec: 0)]
            #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
            #expect(unlink(path) == 0)
            try VersionHistory.restore(try #require(VersionHistory.deletedNotes(in: m.database).first), in: m.database)
            var info = stat()
            #expect(eventually(5) { stat(path, &info) == 0 })
            #expect(info.st_mode & 0o7777 == 0o600)
            #expect(info.st_uid == 1000 && info.st_gid == 1001)
            #expect(info.st_mtim.tv_sec == 1_580_000_000)
            #expect(readFile(path) == "secret\n")
        }
    }

    @Test func savesRenamesOverAndUnlinksKeepVersions() throws {
        try withNotesMount(seed: { VersionHistory.install(on: $0, settings: HistorySettings(interval: 600)) }) { m in
            #expect(writeFile(m.path("Plan.md"), "v1\n") == 0)  // a new note: nothing replaced
            #expect(writeFile(m.path("Plan.md"), "v2\n") == 0)  // keeps v1
            #expect(writeFile(m.path("Plan.md"), "v3\n") == 0)  // within 10 minutes: coalesced
            let sed = try sh("sed -i 's/v3/v4/' Plan.md", in: m.root)  // temp file + rename: a save too
            #expect(sed.status == 0)
            #expect(readFile(m.path("Plan.md")) == "v4\n")
            let plan = try #require(recordName(m.path("Plan.md")))
            #expect(VersionHistory.versions(ofNoteNamed: plan, in: m.database).map { "\($0.kindName):\($0.text!)" } == ["edit:v1\n"])
            // `mv Draft.md Plan.md`: the note keeps its record and the state the rename replaced.
            #expect(writeFile(m.path("Draft.md"), "draft\n") == 0)
            let draft = try #require(recordName(m.path("Draft.md")))
            #expect(rename(m.path("Draft.md"), m.path("Plan.md")) == 0)
            #expect(recordName(m.path("Plan.md")) == plan)
            // A metadata change keeps none.
            #expect(chmod(m.path("Plan.md"), 0o600) == 0)
            #expect(unlink(m.path("Plan.md")) == 0)
            #expect(
                VersionHistory.versions(ofNoteNamed: plan, in: m.database).map { "\($0.kindName):\($0.text!)" }
                    == ["edit:v1\n", "rename:v4\n", "delete:draft\n"])
            #expect(VersionHistory.versions(ofNoteNamed: draft, in: m.database).isEmpty)
            // The deleted note is listed and comes back, in the mount too.
            #expect(VersionHistory.deletedNotes(in: m.database).map(\.title) == ["Plan"])
            try VersionHistory.restore(try #require(VersionHistory.deletedNotes(in: m.database).first), in: m.database)
            var shown: String?
            for _ in 0..<50 where shown == nil {
                shown = readFile(m.path("Plan.md"))
                if shown == nil { usleep(20_000) }
            }
            #expect(shown == "draft\n")
            // The versions are not files in the mount.
            #expect(try FileManager.default.contentsOfDirectory(atPath: m.root).sorted() == ["Plan.md"])
        }
    }
}
