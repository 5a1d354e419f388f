import Foundation
import NotesCLI

exit(await NotesCLI.main(CommandLine.arguments))
