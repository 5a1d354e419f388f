/// `.search` in a mount answers from the full-text index: ranked, prefix*, phrases,
/// accents folded; a note written through the mount and searched at once is found, a removed
/// one is gone; the index is built in the background at mount time.

import FUSE
import Foundation
import Index
import Notes
import RecordStore
import TestSupport
import Testing

@testable import NotesFS

@Suite struct SearchMountTests {
    @Test(.tags(.mount), .needsFUSE) func searchDirectoriesUseTheIndex() throws {
        try withNotesMount(seed: { db in
            let work = try db.modify(saving: [Folder(name: "Work").record]).savedRecords[0]
            _ = try db.modify(saving: [Note(title: "Bread", text: "flour and water", folder: work.recordID).record])
            _ = try db.modify(saving: [Note(title: "Groceries", text: "milk, bread, Crème fraîche").record])
        }) { m in
            // The background build is quick here; a listing before it is done waits for it: wait for
            // the index anyway, so the answers below are of a built one (no time is asserted).
            var built = false
            for _ in 0..<200 where !built {
                if (try? TextIndex(databasePath: m.databasePath, create: false).token()) != nil { built = true } else { usleep(50_000) }
            }
            #expect(built)
            // Ranked: the title match first; prefix and phrase queries; accents folded.
            #expect(listing(m.path(".search/brea*")).map(Set.init) == ["Bread.md", "Groceries.md"])
            #expect(try sh("ls -f \(shellQuoted(m.path(".search/bread"))) | grep -v '^[.]'").out.split(separator: "\n").first == "Bread.md")
            #expect(listing(m.path(".search/\"milk, bread\"")) == ["Groceries.md"])
            #expect(listing(m.path(".search/creme")) == ["Groceries.md"])
            #expect(listing(m.path(".search/bread NOT milk")) == ["Bread.md"])
            // Written through the mount and searched at once.
            try Data("a zebra crossing\n".utf8).write(to: URL(fileURLWithPath: m.path("Work/Zoo.md")))
            #expect(listing(m.path(".search/zebra")) == ["Zoo.md"])
            #expect(try String(contentsOfFile: m.path(".search/zebra/Zoo.md"), encoding: .utf8) == "a zebra crossing\n")
            #expect(unlink(m.path("Work/Zoo.md")) == 0)
            #expect(listing(m.path(".search/zebra")) == [])
            // `query` through the store narrows with the index and agrees with it.
            let query = Query(recordType: Note.recordType, predicate: try Predicate(format: "text CONTAINS 'our and'"))
            #expect(m.database.queryMetadata(query).count == 1)
        }
    }

    /// A mount (indexing in the background) and CLI searches (catching up the same index) at once,
    /// while notes are written: neither corrupts it, and the last answers are exact.
    @Test(.tags(.mount), .needsFUSE) func aMountAndTheCommandLineShareTheIndex() throws {
        try withNotesMount { m in
            let notesfs = notesfsBinary
            var searches = 0
            for i in 0..<60 {
                try Data("shared word \(i)\n".utf8).write(to: URL(fileURLWithPath: m.path("n\(i).md")))
                if i % 6 == 0 {
                    let found = try run([notesfs, "--db", m.databasePath, "search", "shared", "--limit", "0"])
                    #expect(found.status == 0)
                    searches += 1
                }
            }
            #expect(searches == 10)
            let last = try run([notesfs, "--db", m.databasePath, "search", "shared", "--limit", "0", "--json"])
            #expect(last.out.components(separatedBy: "\"path\"").count - 1 == 60)
            #expect(listing(m.path(".search/shared"))?.count == 60)
            let check = try run([notesfs, "--db", m.databasePath, "fsck"])
            #expect(check.status == 0, "\(check.out)")
        }
    }

    /// A full disk while the index is built: the search still answers exactly (by reading the
    /// notes into a temporary index elsewhere) and says why; room again, the index is built.
    @Test(.tags(.mount), .notInFastRuns) func aFullDiskStillAnswers() throws {
        try withTmpfs("notesfs-search-full", options: "size=4m") { point in
            let notesfs = notesfsBinary
            let db = point + "/db"
            for i in 0..<20 {
                let made = try run([notesfs, "--db", db, "note", "new", "n\(i)", "--text", "word\(i) " + (i % 2 == 0 ? "even" : "odd")])
                #expect(made.status == 0, "\(made)")
            }
            let fill = try run(["/bin/dd", "if=/dev/zero", "of=\(point)/fill", "bs=4k"])
            #expect(fill.status != 0)
            let found = try run([notesfs, "--db", db, "search", "even", "--limit", "0"])
            #expect(found.status == 0, "\(found)")
            #expect(found.out.split(separator: "\n").filter { $0.hasSuffix(".md") || $0.contains(".md ") }.count == 10)
            #expect(found.stderr.contains("search index not usable"))
            try FileManager.default.removeItem(atPath: point + "/fill")
            let again = try run([notesfs, "--db", db, "search", "odd", "--limit", "0"])
            #expect(again.status == 0)
            #expect(!again.stderr.contains("not usable"), "\(again)")
            #expect(FileManager.default.fileExists(atPath: db + "/indexes/text.sqlite"))
        }
    }
}

/// `.search/QUERY` means what `notesfs search` means, whether the index is built or not.
@Suite struct SearchMountMeaningTests {
    /// The names in a directory (in readdir's order), or the errno of `opendir` or `readdir`.
    func entries(_ path: String) -> Result<[String], Errno> {
        guard let directory = opendir(path) else { return .failure(Errno(rawValue: errno)) }
        defer { closedir(directory) }
        var names: [String] = []
        while true {
            errno = 0
            guard let entry = readdir(directory) else { break }
            let name = entryName(entry)
            if name != "." && name != ".." { names.append(name) }
        }
        return errno == 0 ? .success(names) : .failure(Errno(rawValue: errno))
    }

    @Test(.tags(.mount), .needsFUSE) func everyMatchAsTheCommandFindsIt() throws {
        let count = 450
        try withNotesMount(seed: { db in
            var records = (0..<count).map { Note(title: "n\($0)", text: "alphabet soup \($0)").record }
            records.append(Note(title: "Notebook", text: "paper").record)
            _ = try db.modify(saving: records)
        }) { m in
            let notesfs = notesfsBinary
            // Right after mounting (the index is being built in the background), then once built.
            for round in 0..<2 {
                let all = try entries(m.path(".search/alphabet")).get()
                #expect(all.count == count, "round \(round)")
                #expect(Set(all).count == count)
                #expect(try entries(m.path(".search/alph")).get() == [], "round \(round): words, not substrings")
                #expect(try entries(m.path(".search/alph*")).get().count == count)
                #expect(try entries(m.path(".search/notebook")).get() == ["Notebook.md"])
                #expect(entries(m.path(".search/NOT")) == .failure(.invalidArgument), "round \(round)")
                #expect(entries(m.path(".search/& 🎉")) == .failure(.invalidArgument))
                // The order is the command's: best first.
                let cli = try run([notesfs, "--db", m.databasePath, "search", "soup 7", "--limit", "0", "--json"])
                let hits = try #require(try JSONSerialization.jsonObject(with: Data(cli.out.utf8)) as? [[String: Any]])
                #expect(try entries(m.path(".search/soup 7")).get() == hits.compactMap { $0["path"] as? String })
                var built = false
                for _ in 0..<400 where !built {
                    if (try? TextIndex(databasePath: m.databasePath, create: false).token()) != nil { built = true } else { usleep(50_000) }
                }
                #expect(built)
            }
        }
    }
}
