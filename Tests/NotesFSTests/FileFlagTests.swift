/// `chattr +a` / `+i` through a real mount: every write path honours them, only root sets them,
/// they are listed by `lsattr` and kept across a remount.

import Foundation
import Glibc
import TestSupport
import Testing

/// `sh -c command` in `directory`; a failure to run it shows as status -1.
private func shell(_ command: String, in directory: String) -> ProgramResult {
    (try? sh(command, in: directory)) ?? ProgramResult(status: -1, stdout: Data(), stderr: "could not run \(command)")
}

@Suite(.tags(.mount), .needsFUSE) struct FileFlagTests {
    @Test func appendOnlyAllowsAppendsAndNothingElse() throws {
        try withNotesMount { m in
            let r = m.root
            #expect(shell("echo one > log.txt && chattr +a log.txt", in: r).status == 0)
            #expect(shell("lsattr log.txt", in: r).out.hasPrefix("-----a"))
            #expect(shell("echo two >> log.txt", in: r).status == 0)
            #expect(shell("echo over > log.txt", in: r).status != 0, "a write without O_APPEND")
            #expect(shell("truncate -s 0 log.txt", in: r).status != 0)
            #expect(shell("rm -f log.txt", in: r).status != 0)
            #expect(shell("mv log.txt moved.txt", in: r).status != 0)
            #expect(shell("chmod 600 log.txt", in: r).status != 0)
            #expect(shell("setfattr -n user.x -v 1 log.txt", in: r).status != 0)
            #expect(shell("ln log.txt hard.txt", in: r).status != 0)
            // A descriptor whose O_APPEND fcntl cleared still writes only at the end.
            let fd = open(m.path("log.txt"), O_WRONLY | O_APPEND | O_CLOEXEC)
            #expect(fd >= 0)
            #expect(fcntl(fd, F_SETFL, 0) == 0)
            #expect(pwrite(fd, "X", 1, 0) == -1 && errno == EPERM)
            close(fd)
            #expect(readFile(m.path("log.txt")) == "one\ntwo\n")
            #expect(shell("chattr -a log.txt && rm log.txt", in: r).status == 0)
        }
    }

    @Test func immutableRefusesEveryChange() throws {
        try withNotesMount { m in
            let r = m.root
            #expect(shell("echo fixed > n.md", in: r).status == 0)
            let fd = open(m.path("n.md"), O_WRONLY | O_APPEND | O_CLOEXEC)  // opened before the flag
            #expect(fd >= 0)
            defer { close(fd) }
            #expect(shell("chattr +i n.md", in: r).status == 0)
            #expect(shell("lsattr n.md", in: r).out.hasPrefix("----i"))
            #expect(write(fd, "x", 1) == -1 && errno == EPERM)
            #expect(shell("echo more >> n.md", in: r).status != 0)
            #expect(shell("touch -d 2001-01-01 n.md", in: r).status != 0)
            #expect(shell("chown 1000 n.md", in: r).status != 0)
            #expect(shell("rm -f n.md", in: r).status != 0)
            #expect(readFile(m.path("n.md")) == "fixed\n")
            #expect(shell("chattr -i n.md && echo changed > n.md", in: r).status == 0)
            #expect(readFile(m.path("n.md")) == "changed\n")
        }
    }

    @Test func directoriesHonourThemForTheirEntries() throws {
        try withNotesMount { m in
            let r = m.root
            #expect(shell("mkdir fixed logs && touch fixed/old.txt logs/old.txt", in: r).status == 0)
            #expect(shell("chattr +i fixed && chattr +a logs", in: r).status == 0)
            #expect(shell("lsattr -d fixed logs", in: r).out.split(separator: "\n").map { String($0.prefix(6)) } == ["----i-", "-----a"])
            #expect(shell("touch fixed/new.txt", in: r).status != 0)
            #expect(shell("rm fixed/old.txt", in: r).status != 0)
            #expect(shell("mkdir fixed/sub", in: r).status != 0)
            #expect(shell("touch logs/new.txt", in: r).status == 0, "append-only directory: new entries allowed")
            #expect(shell("rm logs/old.txt", in: r).status != 0)
            #expect(shell("mv logs/new.txt elsewhere.txt", in: r).status != 0)
            #expect(listing(m.path("fixed")) == ["old.txt"])
            #expect(listing(m.path("logs")) == ["new.txt", "old.txt"])
        }
    }

    /// `chattr +A`: reads never move the file's atime.
    @Test func noAtimeFlagKeepsTheAtime() throws {
        try withNotesMount { m in
            #expect(shell("echo a > quiet.md && chattr +A quiet.md", in: m.root).status == 0)
            let before = statOf(m.path("quiet.md")).0.map { nanoseconds($0.st_atim) }
            usleep(20_000)
            #expect(shell("cat quiet.md", in: m.root).out == "a\n")
            #expect(statOf(m.path("quiet.md")).0.map { nanoseconds($0.st_atim) } == before)
        }
    }

    @Test func onlyRootSetsThemAndTheyOutliveAMount() throws {
        try withDatabaseDirectory { path in
            try withNotesMount(databasePath: path, mountOptions: ["allow_other"]) { m in
                #expect(writeFile(m.path("mine.txt"), "x", mode: 0o644) == 0)
                #expect(chown(m.path("mine.txt"), 1000, 1000) == 0)
                let asOwner = try run(
                    ["/usr/bin/setpriv", "--reuid=1000", "--regid=1000", "--clear-groups", "/usr/bin/chattr", "+a", m.path("mine.txt")])
                #expect(asOwner.status != 0, "only root sets append-only")
                let noDump = try run(
                    ["/usr/bin/setpriv", "--reuid=1000", "--regid=1000", "--clear-groups", "/usr/bin/chattr", "+d", m.path("mine.txt")])
                #expect(noDump.status == 0, "\(noDump)")
                #expect(shell("chattr +i mine.txt", in: m.root).status == 0)
                #expect(shell("chattr +c mine.txt", in: m.root).status != 0, "compression is not supported")
            }
            try withNotesMount(databasePath: path) { m in
                #expect(shell("lsattr mine.txt", in: m.root).out.hasPrefix("----i-d"))
                #expect(shell("rm -f mine.txt", in: m.root).status != 0)
            }
        }
    }
}
