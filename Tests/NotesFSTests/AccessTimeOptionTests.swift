/// atime under the standard mount options: relatime (the default) moves a file's atime at its first
/// read after a write even when the kernel serves the read from its pages, `strictatime` at every
/// read, `noatime` never; a folder's listing moves the folder's atime unless `nodiratime`.

import Foundation
import Glibc
import NotesFS
import TestSupport
import Testing

private func atime(_ path: String) -> Int {
    var st = stat()
    return stat(path, &st) == 0 ? nanoseconds(st.st_atim) : -1
}

@Suite(.tags(.mount), .needsFUSE) struct AccessTimeOptionTests {
    @Test func relatimeMovesTheAtimeAtTheFirstReadAfterAWriteOnly() throws {
        try withNotesMount { m in
            let file = m.path("file1.md")
            let run1 = try sh("echo aaa > \(shellQuoted(file))")
            #expect(run1.status == 0)
            let written = atime(file)
            usleep(20_000)
            let run2 = try sh("cat \(shellQuoted(file))")
            #expect(run2.out == "aaa\n")
            let first = atime(file)
            #expect(first > written, "the first read after the write moves the atime")
            usleep(20_000)
            let run3 = try sh("cat \(shellQuoted(file))")
            #expect(run3.status == 0)
            #expect(atime(file) == first, "a second read does not (relatime)")
            usleep(20_000)
            let run4 = try sh("echo bbb >> \(shellQuoted(file)) && cat \(shellQuoted(file))")
            #expect(run4.status == 0)
            #expect(atime(file) > first, "nor until the next write")
        }
    }

    @Test func anOpenWithoutAReadMovesNothingAsOnExt4() throws {
        try withNotesMount { m in
            let file = m.path("opened.md")
            let write = try sh("echo aaa > \(shellQuoted(file))")
            #expect(write.status == 0)
            let written = atime(file)
            usleep(20_000)
            // lsattr opens the file for reading and asks for its flags only.
            let fd = open(file, O_RDONLY | O_NONBLOCK)
            #expect(fd >= 0)
            close(fd)
            let lsattr = try sh("lsattr \(shellQuoted(file))")
            #expect(lsattr.status == 0)
            #expect(atime(file) == written, "no read yet")
            usleep(20_000)
            let read = try sh("cat \(shellQuoted(file))")
            #expect(read.out == "aaa\n")
            #expect(atime(file) > written, "the first read moves it")
        }
    }

    @Test func strictatimeMovesItAtEveryRead() throws {
        try withNotesMount(options: NotesFileSystem.Options(strictAccessTime: true)) { m in
            let file = m.path("s.md")
            let run5 = try sh("echo aaa > \(shellQuoted(file)) && cat \(shellQuoted(file))")
            #expect(run5.status == 0)
            let first = atime(file)
            usleep(20_000)
            let run6 = try sh("cat \(shellQuoted(file))")
            #expect(run6.status == 0)
            #expect(atime(file) > first)
        }
    }

    @Test func noatimeNeverMovesIt() throws {
        try withNotesMount(options: NotesFileSystem.Options(noAccessTime: true)) { m in
            let file = m.path("n.md")
            let run7 = try sh("echo aaa > \(shellQuoted(file))")
            #expect(run7.status == 0)
            let written = atime(file)
            usleep(20_000)
            let run8 = try sh("cat \(shellQuoted(file))")
            #expect(run8.status == 0)
            #expect(atime(file) == written)
        }
    }

    @Test(arguments: [false, true]) func aListingMovesTheFoldersAtimeUnlessNodiratime(nodiratime: Bool) throws {
        try withNotesMount(options: NotesFileSystem.Options(noDirectoryAccessTime: nodiratime)) { m in
            #expect(mkdir(m.path("dir1"), 0o755) == 0)
            #expect(writeFile(m.path("dir1/x.md"), "x") == 0)
            let before = atime(m.path("dir1"))
            usleep(20_000)
            let run9 = try sh("ls \(shellQuoted(m.path("dir1")))")
            #expect(run9.out == "x.md\n")
            #expect((atime(m.path("dir1")) > before) == !nodiratime)
        }
    }
}
