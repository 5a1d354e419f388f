import Foundation
import NotesCLI

exit(NotesCLI.main(CommandLine.arguments))
