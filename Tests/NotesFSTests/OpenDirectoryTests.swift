/// A directory held open stays `fstat`-able after a rename replaces it or `rmdir` removes it, until
/// its descriptor closes (as on tmpfs: a directory of link count 0).

import Foundation
import Glibc
import TestSupport
import Testing

@Suite(.tags(.mount), .needsFUSE) struct OpenDirectoryTests {
    @Test(arguments: ["rename over", "rmdir"]) func aReplacedDirectoryHeldOpenCanStillBeStatted(how: String) throws {
        try withNotesMount { m in
            #expect(mkdir(m.path("old"), 0o750) == 0)
            #expect(mkdir(m.path("new"), 0o755) == 0)
            let fd = open(m.path("old"), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            #expect(fd >= 0)
            defer { close(fd) }
            var before = stat()
            #expect(fstat(fd, &before) == 0)
            if how == "rmdir" {
                #expect(rmdir(m.path("old")) == 0)
            } else {
                #expect(rename(m.path("new"), m.path("old")) == 0)
            }
            var after = stat()
            #expect(fstat(fd, &after) == 0, "fstat: \(String(cString: strerror(errno)))")
            #expect(after.st_ino == before.st_ino)
            #expect(after.st_mode == S_IFDIR | 0o750)
            #expect(after.st_nlink == 0)
        }
    }
}
