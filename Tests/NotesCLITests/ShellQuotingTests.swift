/// `notesfs ls` prints names holding a newline or another unprintable character as GNU `ls
/// --quoting-style=shell-escape` does, so every line is one name and a shell reads it back.

import Foundation
import Notes
import RecordStore
import TestSupport
import Testing

@Suite struct ShellQuotingTests {
    /// Titles with unprintable characters in every position, with quotes, backslashes, `$`,
    /// spaces, non-ASCII letters, C1 controls, a line separator and an unassigned code point.
    static let unprintable = [
        "a\nb", "\nlead", "trail\n", "tab\there", "it's\nx", "sp ace\nx", "bell\u{7}", "esc\u{1B}[1m", "del\u{7F}", "a\n\nb",
        "\u{1}\u{2}", "é\nü", "back\\slash\n", "dq\"x\n", "$x\n", "c1\u{85}x", "q'\n'", "ls\u{2028}x", "nul\u{1}'", "\r\u{B}\u{C}\u{8}",
        "x\n\\y", "un\u{378}x",
    ]
    static let printable = ["plain", "with space", "it's", "zw\u{200B}x", "naïve"]

    @Test func lsQuotesLikeGNUls() throws {
        let db = makeDatabasePath("quoting")
        do {
            let store = try RecordDatabase(path: db, backgroundThread: false)
            defer { try? store.close() }
            try store.modify(saving: (Self.unprintable + Self.printable).map { Note(title: $0, text: "").record })
        }
        let listed = try notesfs(["ls"], db: db)
        #expect(listed.status == 0, "\(listed.stderr)")
        // One line per name: nothing raw spills over a line.
        #expect(listed.lines.count == Self.unprintable.count + Self.printable.count, "\(listed.out)")

        // GNU ls over files of the same names.
        let directory = makeTemporaryDirectory("quotingls")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for name in Self.unprintable {
            #expect(FileManager.default.createFile(atPath: directory + "/" + name + ".md", contents: Data()))
        }
        let gnu = try run("/usr/bin/ls", ["--quoting-style=shell-escape", directory], environment: ["LC_ALL": "C.UTF-8"])
        #expect(gnu.status == 0, "\(gnu.stderr)")
        let expected = gnu.lines.sorted()
        let quoted = listed.lines.filter { $0.hasPrefix("'") }.sorted()
        #expect(quoted == expected)
        #expect(quoted.count == Self.unprintable.count)
        // Names without unprintable characters print as they are.
        for name in Self.printable { #expect(listed.lines.contains(name + ".md"), "\(name)") }

        // A shell reads each quoted line back as the name.
        let script = #"for line in "$@"; do eval "printf '%s\\0' $line"; done"#
        let back = try run("/bin/bash", ["-c", script, "bash"] + quoted)
        #expect(back.status == 0, "\(back.stderr)")
        let names = back.stdout.split(separator: 0, omittingEmptySubsequences: false).dropLast().map { String(decoding: $0, as: UTF8.self) }
        #expect(names.sorted() == Self.unprintable.map { $0 + ".md" }.sorted())
    }

    @Test func folderLsQuotesToo() throws {
        let db = makeDatabasePath("quotingfolder")
        do {
            let store = try RecordDatabase(path: db, backgroundThread: false)
            defer { try? store.close() }
            try store.modify(saving: [Folder(name: "two\nlines").record, Folder(name: "Work").record])
        }
        let result = try notesfs(["folder", "ls"], db: db)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.lines == ["Work/", "'two'$'\\n''lines'/"])
        #expect(try notesfs(["ls"], db: db).lines == ["Work/", "'two'$'\\n''lines'/"])
    }
}
