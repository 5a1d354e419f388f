import Foundation
import TestSupport
import Testing

/// `import` keeps a file's `user.` extended attributes in its record and `export` writes them back
/// (both ext4 directories under /tmp, which keep user attributes).
@Suite struct ExtendedAttributeImportTests {
    @Test func userAttributesRoundTripThroughImportAndExport() throws {
        let source = makeTemporaryDirectory("xattrsrc")
        let target = makeTemporaryDirectory("xattrout") + "/tree"
        let db = makeDatabasePath("xattrdb")
        defer { for path in [source, target, db] { try? FileManager.default.removeItem(atPath: path) } }
        let setup = try run(
            "/bin/sh",
            [
                "-c",
                """
                cd '\(source)' && mkdir Work && printf 'plan' > Work/Plan.md && printf 'bin' > pic.png &&
                setfattr -n user.xdg.origin.url -v https://example.org/p Work/Plan.md &&
                setfattr -n user.bytes -v 0x00ff00 pic.png &&
                setfattr -n user.tag -v red Work
                """,
            ])
        #expect(setup.status == 0, "\(setup.stderr)")
        let imported = try notesfs(["import", source], db: db)
        #expect(imported.status == 0, "\(imported.stderr)")
        let exported = try notesfs(["export", target], db: db)
        #expect(exported.status == 0, "\(exported.stderr)")
        let dump = try run("/usr/bin/getfattr", ["-R", "-d", "-e", "hex", "--absolute-names", target])
        #expect(
            dump.out.contains("user.xdg.origin.url=0x" + Data("https://example.org/p".utf8).map { String(format: "%02x", $0) }.joined()))
        #expect(dump.out.contains("user.bytes=0x00ff00"))
        #expect(dump.out.contains("user.tag=0x726564"), "a folder's attributes too: \(dump.out)")
    }
}
