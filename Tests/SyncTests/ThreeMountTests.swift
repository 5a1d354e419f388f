import Foundation
import TestSupport
import Testing

/// Three machines, each its own database with a live mount syncing in the background, on one
/// server: what real programs do in one mount (shell redirection, `sed -i`, vim, `mv`, `rm`,
/// `mkdir`, `rmdir`, `rm -r`) and what the CLI does to one database shows in the other two mounts.
@Suite(.tags(.mount, .postgres), .needsFUSE, .needsPostgres) struct ThreeMountTests {
    @Test func aNoteCreatedEditedRenamedMovedAndDeletedInOneShowsInTheOthers() throws {
        try withSyncedMounts(3) { mounts, _ in
            let (a, b, c) = (mounts[0], mounts[1], mounts[2])
            try a.run("echo 'first line' > Plan.md")
            expectEverywhere(mounts, "created in A") { $0.read("Plan.md") == "first line\n" }
            let recordName = try #require(a.recordName("Plan.md"))

            // A same-size edit: a page cache the mount failed to drop would still show the old bytes.
            try b.run("sed -i 's/first/FIRST/' Plan.md")
            expectEverywhere(mounts, "sed -i in B") { $0.read("Plan.md") == "FIRST line\n" }
            try c.run("vim -u NONE -i NONE -es -c 'normal Goadded by vim' -c wq Plan.md")
            expectEverywhere(mounts, "vim in C") { $0.read("Plan.md") == "FIRST line\nadded by vim\n" }
            try a.run("echo 'appended by the shell' >> Plan.md")
            let edited = "FIRST line\nadded by vim\nappended by the shell\n"
            expectEverywhere(mounts, "appended in A") { $0.read("Plan.md") == edited }
            // sed's temp file and vim's rename-and-rewrite save kept the one note: no new record anywhere.
            for mount in mounts { #expect(mount.recordName("Plan.md") == recordName, "\(mount.path): the note is another record") }

            try a.run("mkdir Work && mv Plan.md 'Plan v2.md'")
            expectEverywhere(mounts, "renamed in A") { $0.read("Plan v2.md") == edited && !$0.hasEntry("Plan.md") && $0.exists("Work") }
            try b.run("mv 'Plan v2.md' Work/")
            expectEverywhere(mounts, "moved in B") { $0.read("Work/Plan v2.md") == edited && !$0.hasEntry("Plan v2.md") }
            for mount in mounts { #expect(mount.recordName("Work/Plan v2.md") == recordName, "renames keep the record") }
            try c.run("rm 'Work/Plan v2.md'")
            expectEverywhere(mounts, "deleted in C") { !$0.hasEntry("Work/Plan v2.md") && $0.exists("Work") }
            try a.run("rmdir Work")
            expectEverywhere(mounts, "rmdir in A") { !$0.hasEntry("Work") }
            expectEverywhere(mounts, "an empty root") { (try? FileManager.default.contentsOfDirectory(atPath: $0.path)) == [] }
            expectConverged(mounts)
        }
    }

    @Test func aFolderRemovedWithItsNotesPropagates() throws {
        try withSyncedMounts(3) { mounts, machines in
            let (a, b, c) = (mounts[0], mounts[1], mounts[2])
            try a.run(
                "mkdir -p Top/Inner/Deep && echo one > Top/One.md && echo two > Top/Inner/Two.md && echo three > Top/Inner/Deep/Three.md"
            )
            try a.run("printf 'kept\\n' > Kept.md && mkdir Other && echo other > Other/Stays.md")
            let tree = ["Top/One.md": "one\n", "Top/Inner/Two.md": "two\n", "Top/Inner/Deep/Three.md": "three\n", "Kept.md": "kept\n"]
            expectEverywhere(mounts, "the tree made in A") { mount in tree.allSatisfy { mount.read($0.key) == $0.value } }

            // `rm -r` in B: unlinks and rmdirs, deepest first.
            try b.run("rm -r Top")
            expectEverywhere(mounts, "rm -r in B") { !$0.hasEntry("Top") && $0.read("Kept.md") == "kept\n" && $0.exists("Other/Stays.md") }

            // The store's cascade: `notesfs folder rm` on C's database (mounted) deletes the folder
            // record and, in the same modify, everything in it; every mount shows it gone.
            try c.run("mkdir -p Again/Sub && echo x > Again/X.md && echo y > Again/Sub/Y.md && echo z > Again/Sub/z.bin")
            expectEverywhere(mounts, "the second tree") { $0.read("Again/Sub/Y.md") == "y\n" && $0.read("Again/Sub/z.bin") == "z\n" }
            let removed = try notesfs(machines[2].path, ["folder", "rm", "Again"])
            #expect(removed.status == 0, "folder rm: \(removed.stderr)")
            expectEverywhere(mounts, "folder rm of C's database") { !$0.hasEntry("Again") && $0.exists("Other/Stays.md") }
            expectEverywhere(mounts, "what was kept") { mount in
                Set((try? FileManager.default.contentsOfDirectory(atPath: mount.path)) ?? []) == ["Kept.md", "Other"]
            }
            expectConverged(mounts)
            // No record of either tree is left in any database (the CLI reads each one).
            for machine in machines {
                let notes = try notesfs(machine.path, ["query", "TRUEPREDICATE", "--type", "Note"])
                #expect(notes.status == 0 && notes.out.split(separator: "\n").count == 2, "\(machine.path) holds: \(notes.out)")
            }
        }
    }

    /// A tree of 450 notes in 15 folders copied into one mount (more than one server transaction
    /// and one fetched page of 200) arrives whole in the others (`diff -r` against the source);
    /// `rm -rf` of it in another mount empties every mount.
    @Test func aTreeCopiedIntoOneMountArrivesWholeInTheOthers() throws {
        let source = NSTemporaryDirectory() + "notesfs-tree-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: source) }
        let made = try run(
            "/usr/bin/python3",
            [
                "-c",
                """
                import os, sys
                root = sys.argv[1]
                for f in range(15):
                    os.makedirs(f'{root}/Folder {f}/Inner')
                for n in range(450):
                    path = f'{root}/Folder {n % 15}' + ('/Inner' if n % 2 else '')
                    open(f'{path}/Note {n}.md', 'w').write(f'# Note {n}\\n' + 'some text\\n' * (n % 7))
                """,
                source,
            ], mergingErrors: true)
        try #require(made.status == 0, "\(made.out)")
        try withSyncedMounts(3) { mounts, _ in
            let (a, c) = (mounts[0], mounts[2])
            try a.run("cp -r \(shellQuoted(source)) Tree")
            expectEverywhere(mounts, "the 450 notes copied into A", within: 60) {
                (try? run("/usr/bin/diff", ["-r", source, $0.path + "/Tree"], mergingErrors: true))?.status == 0
            }
            try c.run("rm -rf Tree")
            expectEverywhere(mounts, "rm -rf in C", within: 60) { !$0.hasEntry("Tree") }
            expectConverged(mounts, within: 60)
        }
    }

    /// A machine that was off (C unmounted) catches up when it mounts again, and pushes what the CLI
    /// did to its database meanwhile. (B's rename of a note A had just edited, before B's mount had
    /// read A's edit, once hid A's new note from B's mount: see `CatchUpNotificationTests`.)
    @Test func aMachineMountedAgainCatchesUpAndPushesWhatItsCLIDid() throws {
        try withSyncedMounts(3) { mounts, machines in
            let (a, b, c) = (mounts[0], mounts[1], mounts[2])
            try a.run("mkdir Inbox && echo 'before C went off' > Inbox/First.md")
            expectEverywhere(mounts, "the first note") { $0.read("Inbox/First.md") == "before C went off\n" }
            c.close()
            try a.run("echo 'while C was off' >> Inbox/First.md && echo new > Inbox/Second.md")
            try b.run("mv Inbox/First.md 'Inbox/First (renamed by B).md'")
            let cli = try notesfs(
                machines[2].path, ["note", "new", "Inbox/From C's CLI", "--text", "written by the CLI with C unmounted\n"])
            #expect(cli.status == 0, "\(cli.stderr)")
            expectEverywhere([a, b], "B's rename") { $0.read("Inbox/First (renamed by B).md") == "before C went off\nwhile C was off\n" }
            #expect(!a.hasEntry("Inbox/From C's CLI.md"), "C's CLI change reached A with nothing syncing it")
            let again = try syncedMount(machines[2].path)
            defer { again.close() }
            let all = [a, b, again]
            expectEverywhere(all, "what happened while C was off, and C's CLI note") { mount in
                mount.read("Inbox/First (renamed by B).md") == "before C went off\nwhile C was off\n"
                    && mount.read("Inbox/Second.md") == "new\n"
                    && mount.read("Inbox/From C's CLI.md") == "written by the CLI with C unmounted\n" && !mount.hasEntry("Inbox/First.md")
            }
            expectConverged(all)
        }
    }

    /// Changes made in all three mounts at once, on different notes: each one reaches the others.
    @Test func changesMadeInEveryMountAtOnceAllArrive() throws {
        try withSyncedMounts(3) { mounts, _ in
            for (index, mount) in mounts.enumerated() {
                try mount.run("mkdir From\(index) && for i in 1 2 3 4 5; do echo \"note $i from \(index)\" > From\(index)/N$i.md; done")
            }
            expectEverywhere(mounts, "15 notes from three mounts") { mount in
                (0..<3).allSatisfy { index in (1...5).allSatisfy { mount.read("From\(index)/N\($0).md") == "note \($0) from \(index)\n" } }
            }
            for (index, mount) in mounts.enumerated() {
                try mount.run("sed -i 's/note/edited note/' From\((index + 1) % 3)/N1.md && rm From\((index + 2) % 3)/N5.md")
            }
            expectEverywhere(mounts, "the edits and deletes of every mount") { mount in
                (0..<3).allSatisfy { index in
                    mount.read("From\(index)/N1.md") == "edited note 1 from \(index)\n" && !mount.hasEntry("From\(index)/N5.md")
                        && mount.read("From\(index)/N4.md") == "note 4 from \(index)\n"
                }
            }
            expectConverged(mounts)
        }
    }
}

/// The mounts' trees are identical (`diff -r` of each mount against the first: for trees without
/// FIFOs, which diff would open) and no machine has anything left to push.
func expectConverged(_ mounts: [ChildMount], within seconds: Double = 10, sourceLocation: SourceLocation = #_sourceLocation) {
    for mount in mounts {
        let status = { (try? notesfs(mount.databasePath, ["sync", "status"]))?.out ?? "" }
        #expect(
            eventually(seconds) { status().contains("pending changes: 0") }, "\(mount.databasePath): \(status())",
            sourceLocation: sourceLocation)
    }
    for mount in mounts.dropFirst() {
        let converged = eventually(seconds) {
            (try? run("/usr/bin/diff", ["-r", mounts[0].path, mount.path], mergingErrors: true))?.status == 0
        }
        let diff = (try? run("/usr/bin/diff", ["-r", mounts[0].path, mount.path], mergingErrors: true))?.out ?? ""
        #expect(converged, "\(mounts[0].path) and \(mount.path) differ:\n\(diff)", sourceLocation: sourceLocation)
    }
}
