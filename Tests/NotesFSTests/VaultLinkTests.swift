/// A real vault keeps its links as its users expect through renames made by real programs (`mv`,
/// `git mv`) and saves made by vim: a vault of a few hundred notes written through the mount is
/// read by an independent checker (``VaultLinkChecker``) before and after each step, and every link
/// must still name the same record, broken links stay broken, and nothing but link targets
/// changes (code, URLs, shown text and headings are byte-identical). The `notesfs` commands
/// (`links --broken`, `backlinks`, `tags`) must agree with the checker.

import Foundation
import Notes
import RecordStore
import TestSupport
import Testing

@Suite(.serialized) struct VaultLinkTests {
    /// Writes the generated vault through the mount: `mkdir` and real writes.
    static func write(_ files: [VaultFile], into root: String) throws {
        for folder in VaultGenerator.folders {
            try #require(mkdir(root + "/" + folder, 0o755) == 0, "mkdir \(folder): \(errno)")
        }
        for file in files {
            try #require(writeBytes(root + "/" + file.path, file.bytes) == 0, "write \(file.path)")
        }
    }

    /// Runs a shell command in the mount, which must succeed.
    @discardableResult
    static func shell(_ command: String, in root: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> ProgramResult {
        let result = try sh(command, in: root, timeout: 300)
        try #require(result.status == 0, "\(command): \(result)", sourceLocation: sourceLocation)
        return result
    }

    /// `notesfs --db DB --json ARGUMENTS…` parsed as a JSON array of objects (empty on exit 1).
    static func json(_ arguments: [String], db: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> [[String: Any]] {
        let result = try notesfs(["--json"] + arguments, db: db)
        try #require(result.status == 0 || result.status == 1, "notesfs \(arguments): \(result)", sourceLocation: sourceLocation)
        if result.status == 1 && result.stdout.isEmpty { return [] }
        return try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [[String: Any]], "\(result)")
    }

    static func brokenLinks(db: String) throws -> [BrokenLinkEntry] {
        try json(["links", "--broken"], db: db).map {
            BrokenLinkEntry(path: $0["path"] as? String ?? "?", line: $0["line"] as? Int ?? -1, target: $0["target"] as? String ?? "?")
        }.sorted()
    }

    static func backlinks(of path: String, db: String) throws -> [BacklinkEntry] {
        try json(["backlinks", path], db: db).map {
            BacklinkEntry(
                path: $0["path"] as? String ?? "?", line: $0["line"] as? Int ?? -1, target: $0["target"] as? String ?? "?",
                text: $0["text"] as? String ?? "?")
        }.sorted()
    }

    /// Compares a snapshot taken after a step with the one taken before every step: each note is
    /// still there with the same links, each naming the same record (or still broken), and only
    /// link targets changed (`edited` gives the text a note's skeleton is expected to have now);
    /// `notesfs links --broken` and `backlinks` of `sample` agree with the checker.
    static func verify(
        _ step: String, before: VaultSnapshot, root: String, db: String, sample: [String], edited: [String: (String) -> String] = [:],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> VaultSnapshot {
        let after = try VaultSnapshot(root: root)
        var problems: [String] = []
        for (name, note) in before.notes.sorted(by: { $0.key < $1.key }) {
            guard let now = after.notes[name] else {
                problems.append("\(note.path) (\(name)) is gone")
                continue
            }
            let skeleton = edited[name].map { $0(note.checked.skeleton) } ?? note.checked.skeleton
            if now.checked.skeleton != skeleton {
                problems.append("\(note.path) → \(now.path): text besides link targets changed:\n\(skeleton)\n---\n\(now.checked.skeleton)")
            }
            if now.checked.code != note.checked.code { problems.append("\(now.path): code changed") }
            let (links, targets) = (now.checked.links, after.targets[name]!)
            guard links.count == note.checked.links.count else {
                problems.append("\(now.path): \(note.checked.links.count) links before, \(links.count) after")
                continue
            }
            for (index, old) in note.checked.links.enumerated() where before.targets[name]![index] != targets[index] {
                let wanted = before.targets[name]![index].flatMap { after.path(ofRecord: $0) } ?? "broken"
                problems.append(
                    "\(note.path) → \(now.path) line \(old.line): \(old.written) → \(links[index].written) resolved to "
                        + "\(before.targetPaths[name]![index] ?? "broken") (now \(wanted)), now to \(after.targetPaths[name]![index] ?? "broken")"
                )
            }
        }
        #expect(
            problems.isEmpty, "\(step): \(problems.count) problems:\n\(problems.prefix(30).joined(separator: "\n"))",
            sourceLocation: sourceLocation)
        #expect(after.broken.count == before.broken.count, "\(step): broken links", sourceLocation: sourceLocation)
        let broken = try brokenLinks(db: db)
        let (extraBroken, missingBroken) = (Set(broken).subtracting(after.broken).sorted(), Set(after.broken).subtracting(broken).sorted())
        #expect(
            broken == after.broken, "\(step): links --broken: extra \(extraBroken.prefix(10)), missing \(missingBroken.prefix(10))",
            sourceLocation: sourceLocation)
        for record in sample {
            let path = try #require(after.path(ofRecord: record), "\(step): no file has record \(record)")
            let found = try backlinks(of: path, db: db)
            let expected = after.backlinks(of: path)
            let (extra, missing) = (Set(found).subtracting(expected).sorted(), Set(expected).subtracting(found).sorted())
            #expect(
                found == expected, "\(step): backlinks \(path): extra \(extra.prefix(5)), missing \(missing.prefix(5))",
                sourceLocation: sourceLocation)
        }
        return after
    }

    @Test(.tags(.mount, .slow), .needsFUSE) func renamesByRealProgramsKeepEveryLinkOfAVault() throws {
        try withNotesMount(timeout: 900) { m in
            let root = m.root
            let db = m.databasePath
            try Self.write(VaultGenerator.make(seed: 0x5EED_2026, notes: 300), into: root)
            let before = try VaultSnapshot(root: root)
            let brokenBefore = before.broken
            #expect(before.notes.count == VaultGenerator.anchors.count + 300)
            #expect(before.linkCount > 1_000)
            #expect(brokenBefore.count > 50)
            // Every form of link is there, resolved (the generator writes them to resolve).
            let written = before.notes.values.flatMap { note in note.checked.links.map(\.written) }
            for form in [
                "[[Plan B]]", "|shown text]]", "#Heading A]]", "![[pic 1.png]]", "](<Work/Plan B.md>)", "](./", "](../", "%C3%A9", "](/",
            ] {
                #expect(written.contains { $0.contains(form) }, "no link like \(form)")
            }
            func record(_ path: String) throws -> String { try #require(before.records[path], "no record for \(path)") }
            let sample = try [
                "Other.md", "Work/Plan B.md", "Home/Plan B.md", "Work/Projects/Plan B.md", "Home/Garden/Résumé.md",
                "Work/Meetings/Meeting (notes).md", "Work/Q&A.md",
                "img/pic 1.png",
            ].map(record)
            var current = try Self.verify("as written", before: before, root: root, db: db, sample: sample)
            #expect(current.broken == brokenBefore)

            let git = "git -c user.name=t -c user.email=t@example.com -c core.autocrlf=false -c gc.auto=0"
            let steps = [
                ("mv within a folder", "mv 'Work/Plan B.md' 'Work/Plan C.md'"),
                ("mv across folders", "mv 'Home/Garden/Résumé.md' 'Café (Paris)/Menus/'"),
                // `[[Plan B]]` now names the root's note first (ties: the path from the root).
                ("mv to the root", "mv 'Work/Projects/Plan B.md' ."),
                ("mv of an attachment into a new folder", "mkdir img/old && mv 'img/pic 1.png' img/old/"),
                ("mv of a folder with subfolders (three levels)", "mv Home 'Archive/Home & Garden'"),
                // From elsewhere, `[[Meeting (notes)]]` named the shortest path: Inbox's is shorter.
                (
                    "mv into a folder where the name ties",
                    "mv 'Work/Meeting (notes).md' Inbox/ && mv 'Inbox/Meeting (notes).md' 'Inbox/Meeting (notes, old).md'"
                ),
                // The repository's own files (`.git/…`) sit beside the vault's.
                ("git init, add, commit", "\(git) init -q && \(git) add -A && \(git) commit -qm vault"),
                ("git mv", "\(git) mv 'Work/Q&A.md' 'Work/Questions & Answers.md' && \(git) mv 'Café (Paris)/Q&A.md' Archive/2023/"),
            ]
            for (step, command) in steps {
                try Self.shell(command, in: root)
                current = try Self.verify(step, before: before, root: root, db: db, sample: sample)
            }
            // git sees the rename it made, and the notes whose links it rewrote as modified.
            let status = try Self.shell("\(git) status --porcelain", in: root)
            #expect(status.out.contains("Questions & Answers.md"), "\(status.out)")
            #expect(status.lines.contains { $0.hasPrefix(" M ") }, "\(status.out)")

            // vim renames nothing (`:saveas` writes a copy): its default save of a note that links
            // elsewhere and is linked to keeps the note and its links; every link line ends in
            // " there" now, and the index knows it.
            let otherRecord = try record("Other.md")
            try Self.shell("vim -u DEFAULTS -i NONE -es -c '%s/ here$/ there/' -c wq Other.md", in: root)
            let edited: [String: (String) -> String] = [
                otherRecord: { text in
                    text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
                        line.hasSuffix(" here") ? String(line.dropLast(5)) + " there" : String(line)
                    }.joined(separator: "\n")
                }
            ]
            let targetsOfOther = Set(current.targets[otherRecord]!.compactMap { $0 })
            current = try Self.verify("vim save", before: before, root: root, db: db, sample: sample + targetsOfOther, edited: edited)
            #expect(current.notes[otherRecord]?.path == "Other.md")
            #expect(recordName(root + "/Other.md") == otherRecord)
            for target in targetsOfOther {
                let path = try #require(current.path(ofRecord: target))
                let found = try Self.backlinks(of: path, db: db).filter { $0.path == "Other.md" }
                #expect(!found.isEmpty && found.allSatisfy { $0.text.hasSuffix(" there") }, "backlinks \(path): \(found)")
            }

            // Tags: the index counts what a scan for `#tag` outside code finds.
            let tags = try Self.json(["tags"], db: db)
            let counted = Dictionary(
                tags.map { (($0["tag"] as? String ?? "?").lowercased(), $0["count"] as? Int ?? -1) }, uniquingKeysWith: +)
            #expect(counted == current.tagCounts)
            #expect(current.broken.count == brokenBefore.count)
        }
    }

    /// Editors' saves rename the note away and back (vim with `backupcopy=no`, emacs'
    /// backup-by-rename) or rename a new file over it (sed -i, Python's `os.replace`, a note moved
    /// over it): none of them is a move of the note, so no link to it changes, and the index
    /// still finds every link to it.
    @Test(.tags(.mount), .needsFUSE) func editorSavesRewriteNoLink() throws {
        try withNotesMount(timeout: 300) { m in
            let (root, db) = (m.root, m.databasePath)
            for folder in ["Work", "Archive"] { try #require(mkdir(root + "/" + folder, 0o755) == 0) }
            let linking = [
                "Index.md": "[[Work/Plan]], [x](Work/Plan.md), [y](<Work/Plan.md>) and [[Plan]]\n",
                "Work/Sibling.md": "[[Plan]], [[Plan|p]], [z](./Plan.md#Goals), ![[Plan]]\n",
                "Archive/Plan.md": "the other plan\n",
            ]
            for (path, text) in linking { try #require(writeFile(root + "/" + path, text) == 0) }
            try #require(writeFile(root + "/Work/Plan.md", "# Goals\nsee [[Index]]\n") == 0)
            let plan = try #require(recordName(root + "/Work/Plan.md"))
            let backlinksBefore = try Self.backlinks(of: "Work/Plan.md", db: db)
            #expect(backlinksBefore.count == 8, "\(backlinksBefore)")  // Index's `[[Plan]]` too: Work's path is shorter
            let environment = ["HOME": root, "TERM": "dumb"]
            let emacs = """
                (progn (setq make-backup-files t backup-by-copying nil) (find-file "Work/Plan.md")
                  (goto-char (point-max)) (insert "by emacs\\n") (save-buffer))
                """
            let python =
                "import os\nopen('Work/p.tmp', 'w').write(open('Work/Plan.md').read() + 'by python\\n')\nos.replace('Work/p.tmp', 'Work/Plan.md')"
            let saves: [(String, [String])] = [
                (
                    "vim",
                    [
                        "/bin/sh", "-c",
                        "vim -u DEFAULTS -i NONE -es -c 'set backupcopy=no writebackup nobackup' -c 'normal Goby vim' -c wq Work/Plan.md",
                    ]
                ),
                ("emacs", ["/usr/bin/emacs", "-Q", "--batch", "--eval", emacs]),
                ("sed -i", ["/bin/sed", "-i", "$a by sed", "Work/Plan.md"]),
                ("os.replace", ["/usr/bin/env", "python3", "-c", python]),
                (
                    "mv of a note over it",
                    [
                        "/bin/sh", "-c",
                        "cat Work/Plan.md > Work/Plan.new.md && echo by mv >> Work/Plan.new.md && mv Work/Plan.new.md Work/Plan.md",
                    ]
                ),
            ]
            var lines = ["# Goals", "see [[Index]]"]
            for (editor, command) in saves {
                let result = try run(command, in: root, environment: environment)
                try #require(result.status == 0, "\(editor): \(result)")
                lines.append("by " + editor.split(separator: " ")[0].replacingOccurrences(of: "os.replace", with: "python"))
                #expect(readFile(root + "/Work/Plan.md") == lines.joined(separator: "\n") + "\n", "\(editor)")
                #expect(recordName(root + "/Work/Plan.md") == plan, "\(editor): the note kept its record")
                for (path, text) in linking { #expect(readFile(root + "/" + path) == text, "\(editor) changed \(path)") }
                let backlinks = try Self.backlinks(of: "Work/Plan.md", db: db)
                #expect(backlinks == backlinksBefore, "\(editor)")
                #expect(listing(root + "/Work") == ["Plan.md", "Sibling.md"], "\(editor)")
            }
        }
    }

    /// The text of the `index`th of the notes that link to `Hub/Target.md`, in one of four forms.
    static func linkerText(_ index: Int) -> String {
        switch index % 4 {
        case 0: "see [[Target]]\n"
        case 1: "see [[Hub/Target|the hub]]\n"
        case 2: "see [x](../Hub/Target.md#Top)\n"
        default: "see ![t](<Hub/Target.md>)\n"
        }
    }

    /// 1,000 notes in four folders linking to `Hub/Target.md`, a note `Stable.md`, an empty `Inbox`.
    static func seedHub(_ database: RecordDatabase) throws {
        let hub = try saveFolder(database, name: "Hub")
        _ = try saveFolder(database, name: "Inbox")
        let folders = try (0..<4).map { try saveFolder(database, name: "Many \($0)") }
        var records = [
            Note(title: "Target", text: "# Top\n", folder: hub.recordID).record, Note(title: "Stable", text: "stable\n").record,
        ]
        for index in 0..<1_000 {
            records.append(Note(title: "Linker \(index)", text: linkerText(index), folder: folders[index % 4].recordID).record)
        }
        _ = try database.modify(saving: records)
    }

    @Test(.tags(.mount, .slow), .needsFUSE) func aThousandBacklinksFollowRenamesWhileAnotherProcessWritesNotes() throws {
        try withNotesMount(timeout: 900, seed: Self.seedHub) { m in
            let (root, db) = (m.root, m.databasePath)
            let target = try #require(recordName(root + "/Hub/Target.md"))
            let linked = try Self.backlinks(of: "Hub/Target.md", db: db)
            #expect(linked.count == 1_000)
            // Another process writes 30 notes, one `notesfs note new` each, while the renames run.
            let log = makeTemporaryDirectory("vaultwriter") + "/log"
            let script = """
                i=1; while [ $i -le 30 ]; do
                  \(shellQuoted(notesfsBinary)) --db \(shellQuoted(db)) note new "Inbox/New $i.md" --text "see [[Stable]] $i" || exit 1
                  i=$((i+1))
                done
                """
            let writer = try SpawnedProcess(["/bin/sh", "-c", script], stdout: log, stderr: nil)
            #expect(eventually(60) { (listing(root + "/Inbox")?.count ?? 0) >= 1 }, "the writer wrote nothing")
            try Self.shell("mv Hub/Target.md 'Hub/Target (renamed).md'", in: root)
            try Self.shell("mv Hub 'Hub 2'", in: root)
            let status = writer.wait(seconds: 300)
            if status == nil { kill(writer.pid, SIGKILL) }
            #expect(status == 0, "writer: \(String(describing: status)) \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")

            // Every link was rewritten, in its own form.
            let final = "Hub 2/Target (renamed).md"
            #expect(recordName(root + "/" + final) == target)
            let found = try Self.backlinks(of: final, db: db)
            #expect(found.count == 1_000)
            #expect(Set(found.map(\.path)).count == 1_000)
            let left = try Self.backlinks(of: "Hub/Target.md", db: db)
            #expect(left.isEmpty)
            #expect(readFile(root + "/Many 0/Linker 0.md") == "see [[Target (renamed)]]\n")
            #expect(readFile(root + "/Many 1/Linker 1.md") == "see [[Hub 2/Target (renamed)|the hub]]\n")
            // Each destination keeps its form (relative with a heading; in `<…>`); the characters
            // it escapes follow LinkRewriter's encoding rules, so only the form is checked here.
            let relative = try #require(readFile(root + "/Many 2/Linker 2.md"))
            #expect(relative.hasPrefix("see [x](../Hub%202/Target%20") && relative.hasSuffix(".md#Top)\n"), "\(relative)")
            let angled = try #require(readFile(root + "/Many 3/Linker 3.md"))
            #expect(angled.hasPrefix("see ![t](<Hub") && angled.hasSuffix(".md>)\n"), "\(angled)")
            let snapshot = try VaultSnapshot(root: root)
            let linkers = snapshot.notes.filter { $0.value.path.hasPrefix("Many ") }
            #expect(linkers.count == 1_000)
            #expect(linkers.keys.allSatisfy { snapshot.targets[$0] == [target] })

            // No note of the writer was lost; each is indexed.
            #expect(listing(root + "/Inbox") == (1...30).map { "New \($0).md" }.sorted())
            for i in 1...30 { #expect(readFile(root + "/Inbox/New \(i).md") == "see [[Stable]] \(i)") }
            let stable = try Self.backlinks(of: "Stable.md", db: db)
            #expect(stable.count == 30)
        }
    }

    /// The commit sequence number of the record behind `path` (its change tag is that number in
    /// base 36): which of two commits came first, across processes.
    static func commitSeq(_ path: String) throws -> Int {
        let tag = try #require(xattr(path, "user.notesfs.changeTag"), "change tag of \(path)")
        return try #require(Int(tag, radix: 36), "change tag \(tag)")
    }

    /// A note that another process commits before a rename's commit has its links to the renamed
    /// note rewritten too, even when it commits while the mount plans the rename (1,000 notes to
    /// rewrite make that plan take a while). Two processes write notes linking to
    /// `[[Hub/Target]]` throughout; a note whose commit came before the rename's must resolve to
    /// the note after it, and one that came after was broken when written and stays so.
    @Test(.tags(.mount, .slow), .needsFUSE) func aRenameRewritesNotesOtherProcessesCommittedBeforeIt() throws {
        try withNotesMount(timeout: 900, seed: Self.seedHub) { m in
            let (root, db) = (m.root, m.databasePath)
            let target = try #require(recordName(root + "/Hub/Target.md"))
            let log = makeTemporaryDirectory("vaultwriter") + "/log"
            func loop(_ prefix: String) -> String {
                """
                i=1; while [ $i -le 40 ]; do
                  \(shellQuoted(notesfsBinary)) --db \(shellQuoted(db)) note new "Inbox/\(prefix) $i.md" --text "see [[Hub/Target]] $i" || exit 1
                  i=$((i+1))
                done
                """
            }
            let writers = try ["A", "B"].map { try SpawnedProcess(["/bin/sh", "-c", loop($0)], stdout: log, stderr: nil) }
            #expect(eventually(60) { (listing(root + "/Inbox")?.count ?? 0) >= 4 }, "the writers wrote nothing")
            try Self.shell("mv Hub/Target.md Hub/Moved.md", in: root)
            let renameSeq = try Self.commitSeq(root + "/Hub/Moved.md")
            for writer in writers {
                let status = writer.wait(seconds: 300)
                if status == nil { kill(writer.pid, SIGKILL) }
                #expect(status == 0, "writer: \(String(describing: status)) \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
            }

            // The mount reads other processes' commits about four times a second: the last ones
            // show within that (what this test checks is what the rename did, not how soon).
            #expect(
                eventually(30) { (listing(root + "/Inbox")?.count ?? 0) == 80 },
                "the mount shows \(listing(root + "/Inbox")?.count ?? 0) of 80")
            let snapshot = try VaultSnapshot(root: root)
            var (before, after, missed) = (0, 0, [String]())
            for (name, note) in snapshot.notes where note.path.hasPrefix("Inbox/") {
                let resolves = snapshot.targets[name] == [target]
                if try Self.commitSeq(root + "/" + note.path) < renameSeq || resolves {
                    before += 1
                    if !resolves { missed.append("\(note.path): \(note.text)") }
                } else {
                    after += 1
                }
            }
            #expect(before + after == 80)
            #expect(missed.isEmpty, "committed before the rename (seq \(renameSeq)), not rewritten: \(missed.sorted())")
            let backlinks = try Self.backlinks(of: "Hub/Moved.md", db: db)
            #expect(backlinks.count == 1_000 + before)
        }
    }
}
