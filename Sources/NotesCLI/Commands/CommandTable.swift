/// Every subcommand, in the order `--help` lists them.
enum CommandTable {
    static let all: [CommandSpec] =
        FolderCommand.specs + NoteCommand.specs + HistoryCommand.specs + [ListCommand.spec, QueryCommand.spec, ChangesCommand.spec]
        + [SearchCommand.spec, SearchCommand.reindexSpec, LinksCommand.linksSpec, LinksCommand.backlinksSpec, LinksCommand.tagsSpec]
        + TagCommand.specs
        + [ImportCommand.spec, ExportCommand.spec, FsckCommand.spec, SyncCommand.spec]

    /// Top-level command words (`folder`, `note`, `ls`, ..., `help`).
    static let words: Set<String> = Set(all.map { String($0.name.split(separator: " ")[0]) }).union(["help"])

    /// Command groups that take an action word (`folder`, `note`).
    static let groups: Set<String> = Set(all.filter { $0.name.contains(" ") }.map { String($0.name.split(separator: " ")[0]) })

    static func spec(named name: String) -> CommandSpec? { all.first { $0.name == name } }
}
