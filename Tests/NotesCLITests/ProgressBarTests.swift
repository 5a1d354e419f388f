import Foundation
import TestSupport
import Testing

@testable import NotesCLI

@Suite struct ProgressBarTests {
    @Test func textShowsCountRateAndTimeLeft() {
        #expect(
            ProgressBar.render(label: "import", count: 50, total: 100, elapsed: 5, width: 10)
                == "import [#####.....] 50/100  10/s  ETA 0:05")
        #expect(ProgressBar.render(label: "export", count: 100, total: 100, elapsed: 2, width: 4) == "export [####] 100/100  50/s  0:02")
        #expect(ProgressBar.duration(3725) == "1:02:05")
    }

    @Test func quietWhenStderrIsNotATerminal() throws {
        let source = makeTemporaryDirectory("quiet") + "/src"
        try FileManager.default.createDirectory(atPath: source, withIntermediateDirectories: true)
        try Data("x".utf8).write(to: URL(fileURLWithPath: source + "/n.md"))
        let result = try notesfs(["import", source], db: makeDatabasePath("quiet"))
        #expect(!result.stderr.contains("["))
        #expect(result.stderr.hasPrefix("notesfs: imported 1 note, 0 attachments, 0 folders in "))
        let quiet = try notesfs(["-q", "import", source], db: makeDatabasePath("quiet"))
        #expect(quiet.stderr.isEmpty)
    }
}
