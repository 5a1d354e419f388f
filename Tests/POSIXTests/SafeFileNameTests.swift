/// The one name → file name encoding: hostile names (`/`, `..`, NUL, long names, any Unicode)
/// give a file name of one path component, not hidden, within `NAME_MAX`, that decodes back to
/// the name when it is kept whole; and the file names of the record store stay what they were.

import POSIX
import Testing

struct SafeFileNameTests {
    static let hostile: [String] = [
        "/", "..", ".", "a/b", "../../etc/passwd", "\0", "a\0b", "%", "%2f", "%2F", "~", "-_", "",
        "é", "e\u{301}", "日本語のノート", "🧑‍💻", "\u{FFFD}", "\u{202E}txt.exe", "\u{10FFFF}", "line\nbreak", " ",
        String(repeating: "x", count: 160), String(repeating: "x", count: 161), String(repeating: "/", count: 53),
        String(repeating: "/", count: 54), String(repeating: "日", count: 400), String(repeating: "a", count: 5000),
    ]

    @Test(arguments: hostile) func aFileNameIsOneSafeComponent(name: String) {
        let file = SafeFileName.fileName(for: name)
        #expect(!file.contains("/"))
        #expect(!file.contains("\0"))
        #expect(!file.hasPrefix("."))
        #expect(file.utf8.count <= 255 - ".json.tmp-4194304".utf8.count)
        #expect(file.utf8.count <= SafeFileName.longestWholeName)
        var encoded = 0
        SafeFileName.encode(name) { _ in encoded += 1 }
        if encoded <= SafeFileName.longestWholeName {
            #expect(SafeFileName.name(ofFileName: file) == name)
        } else {
            #expect(file.contains("~"))
            #expect(SafeFileName.name(ofFileName: file) == nil)
        }
    }

    @Test func longNamesAreCutAndHashedAndStayApart() {
        let a = String(repeating: "a", count: 5000)
        let b = String(repeating: "a", count: 4999) + "b"
        let fileA = SafeFileName.fileName(for: a)
        #expect(fileA.contains("~"))
        #expect(SafeFileName.name(ofFileName: fileA) == nil)
        #expect(fileA != SafeFileName.fileName(for: b))
        // A cut never leaves half an escape before the `~`.
        let slashes = SafeFileName.fileName(for: String(repeating: "/", count: 54))
        #expect(slashes.hasPrefix(String(repeating: "%2f", count: 33) + "~"))
    }

    /// Distinct as bytes: `é` and `e` + U+0301 are equal Swift strings but two record names.
    @Test func distinctNamesGetDistinctFileNames() {
        let files = Set(Self.hostile.map { Array(SafeFileName.fileName(for: $0).utf8) })
        #expect(files.count == Set(Self.hostile.map { Array($0.utf8) }).count)
    }

    /// The names files already on disk have: a change here would lose every record whose name it touches.
    @Test(arguments: [
        ("plain-Name_1", "plain-Name_1"), ("a/b", "a%2fb"), ("..", "%2e%2e"), ("a\0b", "a%00b"), ("é", "%c3%a9"),
        (String(repeating: "x", count: 170), String(repeating: "x", count: 100) + "~004063172ca7dd6d25213d8d5de9b602"),
    ])
    func fileNamesStayAsOnDisk(name: String, file: String) {
        #expect(SafeFileName.fileName(for: name) == file)
    }
}
