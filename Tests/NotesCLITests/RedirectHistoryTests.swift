import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Note history through a live mount written by shell redirection: the first real content is
/// kept, whatever empty states the redirect's opens and closes save on the way.
@Suite(.tags(.mount), .needsFUSE) struct RedirectHistoryTests {
    @Test func theFirstContentWrittenByRedirectionIsKept() throws {
        let db = makeDatabasePath("redirect")
        #expect(try notesfs(["folder", "new", "Inbox"], db: db).status == 0)
        let mount = try ChildMount(databasePath: db)
        defer { mount.close() }
        let file = mount.path + "/Inbox/I.md"
        let shell = try run("/bin/sh", ["-c", "echo 'important v1' > '\(file)'; echo v2 > '\(file)'"])
        #expect(shell.status == 0, "\(shell.stderr)")
        #expect(try notesfs(["note", "cat", "Inbox/I"], db: db).out == "v2\n")
        let log = try notesfs(["note", "log", "Inbox/I", "--json"], db: db)
        let states = try #require(try parseJSON(log.stdout) as? [[String: Any]], "\(log.out) \(log.stderr)")
        let ids = states.compactMap { $0["version"] as? String }.filter { $0 != "current" }
        let texts = try ids.map { try notesfs(["note", "cat", "Inbox/I", "--at", $0], db: db).out }
        #expect(texts.contains("important v1\n"), "\(texts)")
        #expect(!texts.contains(""), "no empty state is kept: \(texts)")
    }
}
