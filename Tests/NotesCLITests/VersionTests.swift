import Testing
@testable import NotesCLI

@Test func versionPrintsAndSucceeds() async {
    #expect(await NotesCLI.main(["notesfs", "--version"]) == 0)
    #expect(await NotesCLI.main(["notesfs", "bogus"]) != 0)
}
