import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Three live mounts; the server goes down; two mounts edit the same notes (lines apart and the
/// same line) with sed and vim, one deletes a note another edits, each writes a new note; the
/// server comes back and the mounts' background syncs (retrying with their backoff) converge with
/// nothing lost.
///
/// This suite stops its server, so it runs on a cluster of its own.
@Suite(.tags(.mount, .postgres), .needsFUSE, .needsPostgres) struct MountOfflineConflictTests {
    static func lines(_ prefix: String, _ count: Int) -> [String] { (1...count).map { "\(prefix) line \($0)" } }

    static func text(_ lines: [String]) -> String { lines.map { $0 + "\n" }.joined() }

    /// Every `.md` file's lines under `mount`'s root, by path.
    static func noteLines(_ mount: ChildMount) -> [String: [String]] {
        var files: [String: [String]] = [:]
        let enumerator = FileManager.default.enumerator(atPath: mount.path)
        while let path = enumerator?.nextObject() as? String {
            guard path.hasSuffix(".md"), let text = mount.read(path) else { continue }
            files[path] = text.split(separator: "\n").map(String.init)
        }
        return files
    }

    /// The name a conflict copy of `title` made by this host gets on one of `days`.
    static func conflictCopyNames(_ title: String, days: [Date]) -> Set<String> {
        var buffer = [CChar](repeating: 0, count: 256)
        gethostname(&buffer, buffer.count - 1)
        let host = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return Set(
            days.map { day in
                let parts = Calendar(identifier: .gregorian).dateComponents([.year, .month, .day], from: day)
                return String(format: "\(title) (conflict %04d-%02d-%02d \(host)).md", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0)
            })
    }

    @Test func mountsThatEditedWhileTheServerWasDownConvergeAndLoseNoLine() throws {
        let server = try TestCluster()
        let started = Date()
        try withSyncedMounts(3, on: server) { mounts, machines in
            let (a, b, c) = (mounts[0], mounts[1], mounts[2])
            let seed = ["Shared": Self.lines("shared", 10), "Overlap": Self.lines("overlap", 5), "Doomed": Self.lines("doomed", 3)]
            try a.run("mkdir Work")
            for (title, lines) in seed { try a.write("Work/\(title).md", Self.text(lines)) }
            expectEverywhere(mounts, "the seeded notes") { mount in
                seed.allSatisfy { mount.read("Work/\($0.key).md") == Self.text($0.value) }
            }
            var written = Set(seed.values.joined())

            try server.stop()
            // Lines apart in one note (sed in A, vim in B), the same line of another, an edit in A
            // of a note C deletes, and a new note in each mount.
            try a.run("sed -i 's/^shared line 2$/shared line 2 edited by A/' Work/Shared.md")
            try b.run("vim -u NONE -i NONE -es -c '9s/$/ edited by B/' -c wq Work/Shared.md")
            try a.run("sed -i 's/^overlap line 3$/overlap line 3 by A/' Work/Overlap.md")
            try b.run("vim -u NONE -i NONE -es -c '3s/$/ by B/' -c wq Work/Overlap.md")
            try a.run("echo 'doomed edited by A while C deleted it' >> Work/Doomed.md")
            try c.run("rm Work/Doomed.md")
            for (index, mount) in mounts.enumerated() {
                try mount.write("Offline \(index).md", Self.text(Self.lines("offline \(index)", 3)))
                written.formUnion(Self.lines("offline \(index)", 3))
            }
            written.formUnion([
                "shared line 2 edited by A", "shared line 9 edited by B", "overlap line 3 by A", "overlap line 3 by B",
                "doomed edited by A while C deleted it",
            ])
            written.subtract(["shared line 2", "shared line 9", "overlap line 3"])  // replaced by their edits
            // Each mount serves its own edits with the server down.
            #expect(a.read("Work/Shared.md")?.contains("shared line 2 edited by A\n") == true)
            #expect(b.read("Work/Shared.md")?.contains("shared line 9 edited by B\n") == true)
            #expect(!c.hasEntry("Work/Doomed.md"))
            #expect(a.read("Work/Shared.md")?.contains("edited by B") == false, "A saw B's edit with the server down")

            try server.start()
            // The mounts retry with a backoff that doubled while the server was down (1, 2, 4, 8 s…).
            let merged = Self.lines("shared", 10).map {
                $0 == "shared line 2" ? "shared line 2 edited by A" : $0 == "shared line 9" ? "shared line 9 edited by B" : $0
            }
            let copies = Self.conflictCopyNames("Overlap", days: [started, Date().addingTimeInterval(120)])
            expectEverywhere(mounts, "the merged note, the conflict copy, the kept edit, the new notes", within: 90) { mount in
                let files = Self.noteLines(mount)
                return files["Work/Shared.md"] == merged && files.keys.contains { copies.contains(String($0.dropFirst("Work/".count))) }
                    && files["Work/Doomed.md"]?.last == "doomed edited by A while C deleted it"
                    && (0..<3).allSatisfy { files["Offline \($0).md"] == Self.lines("offline \($0)", 3) }
            }
            expectConverged(mounts)

            let files = Self.noteLines(a)
            #expect(files["Work/Shared.md"] == merged, "non-overlapping edits merged")
            #expect(
                files["Work/Doomed.md"] == Self.lines("doomed", 3) + ["doomed edited by A while C deleted it"], "the edit beat the delete")
            // One side's line under the note's name, the other's in exactly one conflict copy beside it.
            let copyFiles = files.filter { $0.key.hasPrefix("Work/Overlap (conflict ") }
            #expect(
                copyFiles.count == 1 && copies.contains(String(copyFiles.first?.key.dropFirst("Work/".count) ?? "")),
                "\(files.keys.sorted())")
            let sides = [files["Work/Overlap.md"] ?? [], copyFiles.first?.value ?? []]
            let expectedSides = ["A", "B"].map { side in
                Self.lines("overlap", 5).map { $0 == "overlap line 3" ? "overlap line 3 by \(side)" : $0 }
            }
            #expect(Set(sides) == Set(expectedSides), "\(sides)")
            #expect(files.count == 3 + 1 + 3, "\(files.keys.sorted())")

            // Nothing lost: every line written is in some note, in every mount; and no line that an
            // edit replaced came back.
            for mount in mounts {
                let present = Set(Self.noteLines(mount).values.joined())
                #expect(written.subtracting(present).isEmpty, "lost in \(mount.path): \(written.subtracting(present).sorted())")
                #expect(
                    present.subtracting(written).isEmpty,
                    "never written or replaced, in \(mount.path): \(present.subtracting(written).sorted())")
            }
            #expect(written.count == 18 + 9 + 5 - 3)  // seeded, new offline notes, edits, replaced lines
            let conflicts = try machines.map { try notesfs($0.path, ["sync", "status"]).out }
            #expect(conflicts.filter { $0.contains("conflicts: 1") }.count == 1, "\(conflicts)")
        }
    }

    /// An attachment overwritten in two mounts while the server was down: both versions are kept
    /// (the design: attachments conflict like notes, without a merge), the same in every mount.
    @Test
    func anAttachmentOverwrittenInTwoMountsWhileTheServerWasDownKeepsBoth() throws {
        let server = try TestCluster()
        try withSyncedMounts(3, on: server) { mounts, machines in
            let (a, b) = (mounts[0], mounts[1])
            let (original, fromA, fromB) = (
                Data([0, 1, 2, 0xFF] + Array("original".utf8)), Data([0xFE, 0, 0xA] + Array("from A".utf8)),
                Data([0xFD, 0, 0xB] + Array("from B".utf8))
            )
            try a.run("mkdir Files")
            try original.write(to: URL(fileURLWithPath: a.path + "/Files/data.bin"))
            // What the check needs first: every database holds the attachment (its mount's sync
            // fetched it; a bound for a loaded machine). Then the mount must show it: a failure
            // there, with the record in the database, is an attachment fetched but not visible.
            let fetched = eventually(60) {
                machines.allSatisfy { machine in
                    (try? machine.database.refresh()) != nil
                        && machine.database.metadata(ofType: "Attachment").contains {
                            $0.field("name")?.stringValue == "data.bin" && $0.field("content")?.assetValue?.size == Int64(original.count)
                        }
                }
            }
            #expect(fetched, "the seeded attachment did not reach every database")
            expectEverywhere(mounts, "the seeded attachment (in every database already)") { $0.bytes("Files/data.bin") == original }
            try server.stop()
            try fromA.write(to: URL(fileURLWithPath: a.path + "/Files/data.bin"))
            try fromB.write(to: URL(fileURLWithPath: b.path + "/Files/data.bin"))
            try server.start()
            /// The contents of every file in `Files`.
            func versions(_ mount: ChildMount) -> [Data] {
                ((try? FileManager.default.contentsOfDirectory(atPath: mount.path + "/Files")) ?? []).sorted().compactMap {
                    mount.bytes("Files/" + $0)
                }
            }
            let bothKept = expectEverywhere(mounts, "both versions of the attachment", within: 90) { Set(versions($0)) == [fromA, fromB] }
            if !bothKept {
                for mount in mounts {
                    let names = (try? FileManager.default.contentsOfDirectory(atPath: mount.path + "/Files")) ?? []
                    let sides = versions(mount).map {
                        $0 == fromA ? "A's" : $0 == fromB ? "B's" : $0 == original ? "the original" : "other"
                    }
                    Issue.record("\(mount.path)/Files holds \(names.sorted()): \(sides) bytes")
                }
            }
            expectConverged(mounts)
        }
    }
}
