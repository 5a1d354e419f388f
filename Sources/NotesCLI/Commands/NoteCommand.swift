import Foundation
import Index
import Notes
import POSIX
import RecordStore

/// `notesfs note new|cat|edit|rm|mv`.
enum NoteCommand {
    static let specs: [CommandSpec] = [
        CommandSpec(
            name: "note new", synopsis: "note new PATH [--text T] [--force]", summary: "create a note (text from --text or stdin)",
            help: """
                The last component of PATH is the title (a trailing .md is dropped); the folders
                before it must exist. Without --text, the text is read from stdin unless it is a
                terminal. Valid UTF-8 of at most 8 MiB is the note's text; other bytes, and larger
                notes, are kept losslessly as its content, as the mount keeps them.
                  --text T      the note's text
                  -f, --force   replace the text of an existing note with this title (keeps its identity)
                """,
            options: [OptionSpec("--text", value: true), OptionSpec("--force", "-f")], writes: true, run: new),
        CommandSpec(
            name: "note cat", synopsis: "note cat PATH|RECORDNAME [--at DATE|VERSION]", summary: "print a note's or an attachment's bytes",
            help: """
                Prints the stored bytes exactly, without adding a newline: a note's text, or the
                bytes of a note that is not UTF-8 text or larger than 8 MiB (kept as its content),
                streamed.
                  --at DATE|VERSION   an earlier version: a version ID from 'note log' (or a
                                      unique prefix), or a date (UTC: the version in effect then)
                """, options: [OptionSpec("--at", value: true)], run: cat),
        CommandSpec(
            name: "note edit", synopsis: "note edit PATH", summary: "edit a note in $VISUAL or $EDITOR (default vi)",
            help: """
                Copies the note's bytes to a temporary file, runs the editor on it through /bin/sh -c,
                and saves the result only if the note did not change meanwhile (another notesfs
                command, the mount). Valid UTF-8 of at most 8 MiB is saved as the note's text, other
                bytes losslessly as its content, as the mount does. On such a conflict nothing is
                overwritten: the edited text stays in the temporary file, whose path is printed, and
                the exit status is 3.
                """,
            writes: true, run: edit),
        CommandSpec(
            name: "note rm", synopsis: "note rm PATH", summary: "delete a note or an attachment", writes: true, run: remove),
        CommandSpec(
            name: "note mv", synopsis: "note mv SRC DST [--no-links]", summary: "move or rename a note or an attachment",
            help: """
                The record keeps its identity (record name, creation date). DST is an existing
                folder (the note keeps its title; use / for the root), or a new path whose last
                component is the new title. An existing note at DST is not replaced.
                Every link that resolved to it is rewritten to resolve to it again, and its own
                relative links follow it, in the same commit (docs/links.md).
                  --no-links   leave every link as it is
                """,
            options: [OptionSpec("--no-links")], writes: true, run: move),
    ]

    // MARK: new

    static func new(_ context: CommandContext) throws(CLIError) {
        let path = try context.positionals(min: 1, max: 1)[0]
        let input = try noteInput(context)  // stdin is read whole before anything else can fail
        defer { if case .file(let fd) = input { close(fd) } }
        let database = try context.openDatabase(create: true)
        let bytes = try storedBytes(input, path: path, database: database)
        let contents = FolderContents(database: database)
        let (folder, fileName) = try contents.newEntry(at: path)
        let title = EntryNames.title(fromFileName: fileName)
        let shown = Array(EntryNames.baseName(title, kind: .note).utf8)
        let existing = contents.children(of: folder?.recordID).first { Array($0.fileName.utf8) == shown }
        var record: Record
        if let existing {
            guard existing.kind == .note, context.arguments.has("--force") else {
                throw CLIError(
                    .conflict, existing.displayPath, "already exists" + (existing.kind == .note ? " (use --force to replace its text)" : "")
                )
            }
            record = try fetchNote(existing, database: database).record
        } else {
            record = Note(title: title, text: "", folder: folder?.recordID).record
        }
        bytes.apply(to: &record)
        do { record = try database.modify(saving: [record]).savedRecords[0] } catch {
            throw CLIError.store(error, subject: path)
        }
        try context.finish(database)
        contents.invalidate()
        if context.output.json, let entry = contents.entry(for: record.recordID) {
            context.output.json(Formatting.json(entry))
        } else {
            context.output.detail("saved note \(contents.entry(for: record.recordID)?.path ?? path) (\(record.recordID.recordName))")
        }
    }

    /// What `note new` stores: `--text`, else stdin when it is not a terminal (read to its end:
    /// up to 8 MiB in memory, a larger input streamed into an unlinked temp file), else empty.
    private enum NoteInput {
        case text(String)
        case bytes([UInt8])
        case file(Int32)
    }

    private static func noteInput(_ context: CommandContext) throws(CLIError) -> NoteInput {
        if let text = context.arguments.value("--text") { return .text(text) }
        guard !FileSystem.stdinIsTerminal else { return .text("") }
        var info = stat()
        if fstat(STDIN_FILENO, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG { return .file(dup(STDIN_FILENO)) }
        let limit = Note.maxInlineTextBytes + 1
        var prefix = [UInt8](repeating: 0, count: limit)
        let count = try FileSystem.io { () throws(SystemCallError) in
            try prefix.withUnsafeMutableBytes { buffer in
                Result { () throws(SystemCallError) in try Syscall.readAll(STDIN_FILENO, into: buffer, path: "stdin") }
            }.get()
        }
        if count < limit { return .bytes(Array(prefix[..<count])) }
        let directory = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        return .file(try FileSystem.spoolToTemporaryFile(STDIN_FILENO, source: "stdin", directory: directory, prefix: prefix))
    }

    /// The input as the mount stores a note's bytes (``StoredBytes``): text, or an asset.
    private static func storedBytes(_ input: NoteInput, path: String, database: RecordDatabase) throws(CLIError) -> StoredBytes {
        switch input {
        case .text(let text) where text.utf8.count <= Note.maxInlineTextBytes: return .text(text)
        case .text(let text):
            do { return .asset(try database.makeAsset(Data(text.utf8))) } catch { throw CLIError.store(error, subject: path) }
        case .bytes(let bytes):
            if let text = Note.inlineText(bytes) { return .text(text) }
            do { return .asset(try database.makeAsset(Data(bytes))) } catch { throw CLIError.store(error, subject: path) }
        case .file(let fd):
            return try StoredBytes.read(fd, path: "stdin", asNote: true, database: database)
        }
    }

    private static func fetchNote(_ entry: FolderEntry, database: RecordDatabase) throws(CLIError) -> Note {
        do { return try Note(record: database.record(for: entry.recordID)) } catch let error as NotesError {
            throw CLIError.notes(error, subject: entry.path)
        } catch let error as RecordStoreError {
            throw CLIError.store(error, subject: entry.path)
        } catch {
            throw CLIError(.io, entry.path, "\(error)")
        }
    }

    // MARK: cat

    static func cat(_ context: CommandContext) throws(CLIError) {
        let argument = try context.positionals(min: 1, max: 1)[0]
        let database = try context.openDatabase()
        let contents = FolderContents(database: database)
        var entry: FolderEntry?
        do { entry = try contents.entry(at: argument) } catch  where error.status == .notFound {
            entry = contents.entry(for: RecordID(recordName: argument))
            if entry == nil { throw error }
        }
        guard let entry, entry.kind != .folder else { throw CLIError(.notFound, argument, "is a folder, not a note") }
        if let selector = context.arguments.value("--at") {
            guard entry.kind == .note || entry.kind == .attachment else { throw CLIError(.notFound, entry.path, "has no versions") }
            let state = try VersionSelector.state(selector, in: VersionSelector.states(of: entry, database: database), path: entry.path)
            try VersionSelector.bytes(of: state, entry: entry, database: database).write(
                to: STDOUT_FILENO, destination: "stdout", database: database)
            return
        }
        let record: Record
        do { record = try database.record(for: entry.recordID) } catch { throw CLIError.store(error, subject: entry.path) }
        try StoredBytes(of: record).write(to: STDOUT_FILENO, destination: "stdout", database: database)
    }

    // MARK: edit

    static func edit(_ context: CommandContext) throws(CLIError) {
        let path = try context.positionals(min: 1, max: 1)[0]
        let database = try context.openDatabase()
        let contents = FolderContents(database: database)
        guard let entry = try contents.entry(at: path), entry.kind == .note else { throw CLIError(.notFound, path, "not a note") }
        var record = try fetchNote(entry, database: database).record
        let original = StoredBytes(of: record)
        // A new file in a new private directory (mkdtemp: 0700), so no one else can put a link there.
        let directory = try FileSystem.makeTemporaryDirectory("edit")
        let file = directory + "/" + entry.fileName
        let discard = { try? FileManager.default.removeItem(atPath: directory) }
        do throws(CLIError) {
            let fd = try FileSystem.createNewFile(file)
            defer { close(fd) }
            try original.write(to: fd, destination: file, database: database)
        } catch {
            discard()
            throw error
        }

        let status: Int32
        do { status = try Editor.edit(file) } catch {
            discard()
            throw error
        }
        guard status == 0 else {
            discard()
            throw CLIError(.io, Editor.command, "the editor failed (status \(status)); the note is unchanged")
        }
        let edited: StoredBytes
        do { edited = try StoredBytes.read(file, asNote: true, database: database) } catch {
            var failure = error
            failure.message += "; your text is kept in \(file)"
            throw failure
        }
        if edited == original {
            discard()
            context.output.info("\(entry.path): unchanged")
            return
        }
        edited.apply(to: &record)
        do {
            // `note edit` always keeps the version it replaces (not coalesced with recent saves).
            try database.modify(saving: [record], savePolicy: .ifServerRecordUnchanged, reason: .editKeepingVersion)
        } catch {
            switch error {
            case .serverRecordChanged:
                throw CLIError(.conflict, entry.path, "changed by someone else while you edited it; your text is kept in \(file)")
            case .unknownItem:
                throw CLIError(.conflict, entry.path, "deleted by someone else while you edited it; your text is kept in \(file)")
            default:
                var failure = CLIError.store(error, subject: entry.path)
                failure.message += "; your text is kept in \(file)"
                throw failure
            }
        }
        try context.finish(database)
        discard()
        context.output.detail("saved \(entry.path)")
    }

    // MARK: rm

    static func remove(_ context: CommandContext) throws(CLIError) {
        let path = try context.positionals(min: 1, max: 1)[0]
        let database = try context.openDatabase()
        let contents = FolderContents(database: database)
        guard let entry = try contents.entry(at: path) else { throw CLIError(.usage, path, "the root is not a note") }
        guard entry.kind != .folder else { throw CLIError(.usage, entry.displayPath, "is a folder; use 'notesfs folder rm'") }
        do { try database.modify(deleting: [entry.recordID]) } catch { throw CLIError.store(error, subject: entry.path) }
        try context.finish(database)
        context.output.detail("removed \(entry.path)")
    }

    // MARK: mv

    static func move(_ context: CommandContext) throws(CLIError) {
        let arguments = try context.positionals(min: 2, max: 2)
        let (source, destination) = (arguments[0], arguments[1])
        let database = try context.openDatabase()
        let contents = FolderContents(database: database)
        guard let entry = try contents.entry(at: source) else { throw CLIError(.usage, source, "the root cannot be moved") }
        guard entry.kind != .folder else { throw CLIError(.usage, entry.displayPath, "is a folder; only notes and attachments move") }

        var folder: RecordID?
        var name = entry.name
        var target: FolderEntry?
        do { target = try contents.entry(at: destination) } catch  where error.status == .notFound {
            let (parent, fileName) = try contents.newEntry(at: destination)
            folder = parent?.recordID
            name = entry.kind == .note ? EntryNames.title(fromFileName: fileName) : EntryNames.name(fromFileName: fileName)
        }
        if let found = target {
            if found.recordID == entry.recordID { return }
            guard found.kind == .folder else { throw CLIError(.conflict, found.path, "already exists") }
            folder = found.recordID
        } else if FolderContents.components(destination).isEmpty {
            folder = nil
        }
        let shown = Array(EntryNames.baseName(name, kind: entry.kind).utf8)
        if let clash = contents.children(of: folder).first(where: { Array($0.fileName.utf8) == shown && $0.recordID != entry.recordID }) {
            throw CLIError(.conflict, clash.displayPath, "already exists")
        }
        var record: Record
        do {
            record = try database.record(for: entry.recordID)
        } catch { throw CLIError.store(error, subject: entry.path) }
        let preserved = record.modificationDate
        record[FolderContents.nameKey(entry.kind)] = .string(name)
        record.setReference(FolderContents.parentKey(entry.kind), to: folder)
        // A move is not an edit of the content: keep the modification date, as rename(2) keeps mtime.
        record.modificationDate = preserved
        // Planned again (the notes changed meanwhile) while other processes commit between the
        // plan and the commit, so that no note linking to it is missed (``LinkRewriteCommit``).
        let index = NotesSearchIndex(database: database)
        let item = MovedItem.file(entry.recordID, folder: folder, fileName: EntryNames.baseName(name, kind: entry.kind))
        let rewrites: LinkRewrites
        do {
            rewrites = try LinkRewriteCommit.run(
                on: database,
                plan: { earlier in
                    guard !context.arguments.has("--no-links") else { return LinkRewrites() }
                    do throws(SQLiteError) { return try index.linkRewrites(for: item, revising: earlier) } catch {
                        throw CLIError(
                            .io, TextIndex.path(forDatabaseAt: database.path),
                            "links cannot be rewritten: \(error.description) (--no-links moves without)")
                    }
                },
                commit: { rewrites in
                    var moved = record
                    if let own = rewrites.notes.first(where: { $0.record.recordID == record.recordID }) {
                        moved[FieldName.text] = own.record[FieldName.text]
                    }
                    let others = rewrites.notes.filter { $0.record.recordID != record.recordID }.map { rewrite in
                        var note = rewrite.record
                        note.modificationDate = Date()
                        return note
                    }
                    try database.modify(saving: [moved] + others, unchangedSince: rewrites.token)
                    return rewrites
                }
            ).value
        } catch let error as CLIError {
            throw error
        } catch let error as RecordStoreError {
            throw CLIError.store(error, subject: entry.path)
        } catch {
            throw CLIError(.io, entry.path, "\(error)")  // neither throws anything else
        }
        for broken in rewrites.leftBroken {
            context.output.info("\(broken.path):\(broken.line): link \(broken.target) could not be rewritten")
        }
        try context.finish(database)
        contents.invalidate()
        context.output.detail("moved \(entry.path) to \(contents.entry(for: entry.recordID)?.path ?? destination)")
    }
}
