/// Out-of-range dates in a hand-edited database never trap: the mount's attributes and
/// xattrs, and `notesfs ls -l`, clamp them.

import FUSE
import Foundation
import Glibc
import Notes
import RecordStore
import TestSupport
import Testing

/// Rewrites `creationDate` and `modificationDate` of the record named `recordName` to `value` (a
/// JSON number) in every file of the closed database at `path` (journal, index, record files).
func handEditDates(_ path: String, recordName: String, to value: String) throws {
    try handEditRecord(path, recordName: recordName, replacing: #""(creationDate|modificationDate)":[-+0-9.eE]+"#, with: "\"$1\":\(value)")
}

/// Replaces the matches of the regular expression `pattern` with `template` in the lines that
/// name the record `recordName`, in every file of the closed database at `path`.
func handEditRecord(_ path: String, recordName: String, replacing pattern: String, with template: String) throws {
    let pattern = try NSRegularExpression(pattern: pattern)
    let enumerator = FileManager.default.enumerator(atPath: path)
    while let relative = enumerator?.nextObject() as? String {
        guard relative.hasSuffix(".json") || relative.hasSuffix(".jsonl") else { continue }
        let file = path + "/" + relative
        let text = try String(contentsOfFile: file, encoding: .utf8)
        guard text.contains(recordName) else { continue }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            let string = String(line)
            guard string.contains(recordName) else { return string }
            return pattern.stringByReplacingMatches(
                in: string, range: NSRange(string.startIndex..., in: string), withTemplate: template)
        }
        try lines.joined(separator: "\n").write(toFile: file, atomically: false, encoding: .utf8)
    }
}

@Suite(.tags(.mount), .needsFUSE) struct DamagedDateTests {
    @Test func hugeDatesAreClampedInTheMountAndTheCLI() throws {
        try withDatabaseDirectory { path in
            let database = try RecordDatabase(path: path, create: true)
            let future = try saveNote(database, title: "future", text: "f")
            let past = try saveNote(database, title: "past", text: "p")
            try saveNote(database, title: "normal", text: "n")
            try database.close()
            try handEditDates(path, recordName: future.recordID.recordName, to: "1e300")
            try handEditDates(path, recordName: past.recordID.recordName, to: "-1e300")
            do {
                let reopened = try openDatabase(path)
                defer { try? reopened.close() }
                #expect(reopened.metadata(for: future.recordID)?.record.modificationDate?.timeIntervalSince1970 == 1e300)
                #expect(reopened.metadata(for: past.recordID)?.record.modificationDate?.timeIntervalSince1970 == -1e300)
            }
            try withNotesMount(databasePath: path) { m in
                let (futureStat, futureErrno) = statOf(m.path("future.md"))
                #expect(futureErrno == 0)
                let (pastStat, pastErrno) = statOf(m.path("past.md"))
                #expect(pastErrno == 0)
                let (normalStat, _) = statOf(m.path("normal.md"))
                if let futureStat, let pastStat, let normalStat {
                    #expect(futureStat.st_mtim.tv_sec > normalStat.st_mtim.tv_sec)
                    #expect(pastStat.st_mtim.tv_sec < 0)
                }
                #expect(xattr(m.path("future.md"), "user.notesfs.creationDate")?.hasPrefix("9999-12-31T23:59:59") == true)
                // Foundation: Julian before 1582
                #expect(xattr(m.path("past.md"), "user.notesfs.creationDate")?.hasPrefix("0001-01-") == true)
                let ls = try run(["/usr/bin/ls", "-l", "--full-time", m.root])
                #expect(ls.status == 0, "\(ls)")
                #expect(ls.out.contains("future.md") && ls.out.contains("past.md"))
                #expect(readFile(m.path("future.md")) == "f")
                // The mount still answers, and touch repairs the date.
                #expect(try run(["/usr/bin/touch", "-d", "2020-01-02T03:04:05Z", m.path("future.md")]).status == 0)
                #expect(statOf(m.path("future.md")).0?.st_mtim.tv_sec == 1_577_934_245)
            }
            let binary = notesfsBinary
            let long = try run([binary, "--db", path, "ls", "-l"])
            #expect(long.status == 0, "\(long)")
            let lines = long.out.split(separator: "\n")
            #expect(lines.count == 3, "\(long.out)")
            #expect(lines.contains { $0.hasSuffix("past.md") && $0.contains("0001-01-01 00:00:00") }, "\(long.out)")
            let json = try run([binary, "--db", path, "ls", "--json"])
            #expect(json.status == 0, "\(json)")
        }
    }
}
