import Foundation
import TestSupport
import Testing

/// What another process commits shows in a mount, also when the mount's own next save fails
/// because of it: a rename of a note the other process had just edited fails its change-tag check
/// (the kernel retries it once, and the retry succeeds), and the other process's new note in the
/// same folder must not stay hidden.
@Suite(.tags(.mount, .postgres), .needsFUSE, .needsPostgres) struct MountOutsideChangeTests {
    @Test func aNoteAnotherProcessAddedStaysVisibleWhenARenameRacesItsEdit() throws {
        let (_, machines) = try makeMachines(1)
        let mount = try syncedMount(machines[0].path, options: ["-o", "nosync"])
        defer { mount.close() }
        let db = machines[0].path
        try mount.run("mkdir Inbox && echo first > 'Inbox/First 0.md'")
        let editor = NSTemporaryDirectory() + "notesfs-append-" + UUID().uuidString
        try "#!/bin/sh\necho appended >> \"$1\"\n".write(toFile: editor, atomically: true, encoding: .utf8)
        chmod(editor, 0o755)
        defer { try? FileManager.default.removeItem(atPath: editor) }
        for round in 1...8 {
            // The CLI (another process) adds a note and edits First; at once the mount renames First.
            let added = try notesfs(db, ["note", "new", "Inbox/Added \(round)", "--text", "added \(round)\n"])
            #expect(added.status == 0, "\(added.stderr)")
            let edit = try run(
                "/usr/bin/env",
                ["EDITOR=" + editor, "VISUAL=" + editor, notesfsBinary, "--db", db, "-q", "note", "edit", "Inbox/First \(round - 1)"],
                mergingErrors: true)
            #expect(edit.status == 0, "\(edit.out)")
            try mount.run("mv 'Inbox/First \(round - 1).md' 'Inbox/First \(round).md'")
        }
        let expected = Set((1...8).map { "Added \($0).md" } + ["First 8.md"])
        #expect(eventually(10) { Set((try? FileManager.default.contentsOfDirectory(atPath: mount.path + "/Inbox")) ?? []) == expected })
        for round in 1...8 { #expect(mount.read("Inbox/Added \(round).md") == "added \(round)\n", "Added \(round)") }
        let listed = try notesfs(db, ["ls", "Inbox"])
        #expect(Set(listed.out.split(separator: "\n").map(String.init)) == expected, "the database: \(listed.out)")
    }
}
