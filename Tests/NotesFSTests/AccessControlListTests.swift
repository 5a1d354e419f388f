/// POSIX ACLs through a real mount with `allow_other`: `setfacl`/`getfacl`, the kernel enforcing
/// them for other uids, default ACLs inherited by new files and directories, `chmod` moving the
/// mask, the umask where no default ACL applies, and a remount.

import Foundation
import Glibc
import TestSupport
import Testing

/// `sh -c command` in `directory`, as uid:gid `id` when given; a failure to run shows as status -1.
private func shell(_ command: String, in directory: String, as id: uid_t? = nil) -> ProgramResult {
    let argv =
        id.map { ["/usr/bin/setpriv", "--reuid=\($0)", "--regid=\($0)", "--clear-groups", "/bin/sh", "-c", command] }
        ?? ["/bin/sh", "-c", command]
    return (try? run(argv, in: directory)) ?? ProgramResult(status: -1, stdout: Data(), stderr: "could not run \(command)")
}

@Suite(.tags(.mount), .needsFUSE) struct AccessControlListTests {
    @Test func aNamedUserEntryGivesThatUserAccessAndNoOneElse() throws {
        try withDatabaseDirectory { path in
            try withNotesMount(databasePath: path, mountOptions: ["allow_other"]) { m in
                let r = m.root
                #expect(shell("echo private > p.md && chown 1000:1000 p.md && chmod 600 p.md", in: r).status == 0)
                #expect(shell("cat p.md", in: r, as: 1001).status != 0)
                let set = shell("setfacl -m u:1001:r p.md", in: r)
                #expect(set.status == 0, "\(set)")
                #expect(shell("getfacl -c p.md", in: r).out.contains("user:1001:r--"))
                #expect(shell("cat p.md", in: r, as: 1001).out == "private\n")
                #expect(shell("cat p.md", in: r, as: 1002).status != 0)
                #expect(shell("echo no >> p.md", in: r, as: 1001).status != 0, "read only")
                // chmod moves the mask: the named entry is no longer effective.
                #expect(shell("chmod 600 p.md", in: r).status == 0)
                #expect(shell("getfacl -c p.md", in: r).out.contains("mask::---"))
                #expect(shell("cat p.md", in: r, as: 1001).status != 0)
                #expect(shell("chmod 640 p.md", in: r).status == 0)
                #expect(shell("cat p.md", in: r, as: 1001).out == "private\n")
                #expect(shell("setfacl -m u:1002:r x-not-there.md", in: r).status != 0)
            }
            try withNotesMount(databasePath: path, mountOptions: ["allow_other"]) { m in
                #expect(shell("getfacl -c p.md", in: m.root).out.contains("user:1001:r--"), "kept across a remount")
                #expect(shell("cat p.md", in: m.root, as: 1001).out == "private\n")
            }
        }
    }

    @Test func aDefaultACLIsInheritedAndTheUmaskAppliesElsewhere() throws {
        try withNotesMount(mountOptions: ["allow_other"]) { m in
            let r = m.root
            #expect(shell("mkdir shared && setfacl -d -m u:1001:rw shared && setfacl -m u:1001:rwx shared", in: r).status == 0)
            #expect(shell("umask 022 && echo made > shared/new.txt && mkdir shared/sub", in: r).status == 0)
            let file = shell("getfacl -c shared/new.txt", in: r).out
            #expect(file.contains("user:1001:rw-"), "\(file)")
            #expect(shell("echo appended >> shared/new.txt", in: r, as: 1001).status == 0)
            #expect(readFile(m.path("shared/new.txt")) == "made\nappended\n")
            let sub = shell("getfacl -c shared/sub", in: r).out
            #expect(sub.contains("default:user:1001:rw-"), "\(sub)")
            // No default ACL: the umask applies, as the kernel leaves it to the filesystem.
            #expect(shell("umask 077 && touch plain.txt && mkdir plaindir", in: r).status == 0)
            #expect(statOf(m.path("plain.txt")).0.map { $0.st_mode & 0o777 } == 0o600)
            #expect(statOf(m.path("plaindir")).0.map { $0.st_mode & 0o777 } == 0o700)
            #expect(shell("getfacl -c plain.txt", in: r).out.contains("user:1001") == false)
        }
    }
}
