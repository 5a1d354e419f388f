import Foundation
import Notes
import RecordStore
import Sync

/// `notesfs sync [init URL | set-url URL | passphrase | status] [--watch]`: replicate the database through a PostgreSQL server.
enum SyncCommand {
    static let spec = CommandSpec(
        name: "sync", synopsis: "sync [init URL|set-url URL|encrypt|rotate-key|passphrase|status] [--watch]",
        summary: "sync the database with a PostgreSQL server",
        help: """
            sync init URL   connect this database to a server (a libpq URL or conninfo, such as
                            postgresql://user@host/notes?sslmode=require; passwords come from
                            PGPASSFILE, ~/.pgpass or the URL); creates or migrates its schema.
                            End-to-end encrypted: a new server gets a data key wrapped by a
                            passphrase (asked on the terminal, or --passphrase-file FILE) and a
                            recovery key printed once; an encrypted server is joined with the
                            passphrase or --recovery-key-file FILE. --no-encryption: a server
                            that can read every note. --ask-passphrase: the key is not kept
                            here; each sync asks (or --passphrase-file); a mount cannot sync
            sync passphrase wrap the server's key with a new passphrase (terminal, or
                            --passphrase-file FILE); nothing is uploaded again
            sync encrypt    encrypt the readable server this database syncs with (all of it
                            in one transaction); prints the recovery key; other machines
                            join with 'sync init URL' and the passphrase
            sync rotate-key seal everything again under a new key (passphrase: the same or a
                            new one; a new recovery key is printed); others join again
            sync set-url URL
                            the same server under a new string (a new password, a moved host):
                            refused unless URL reaches the server this database syncs with;
                            --other-server moves it to another server (everything is uploaded
                            again where that server lacks it, and its records fetched)
            sync            fetch the server's changes, merge, push local ones, once
            sync --watch    stay running: sync whenever the server or the database changes
            sync status     server (never its password), last sync, pending changes, conflict
                            copies, server records set aside (--json)
            Overlapping edits of a note keep both: the local text goes to a new note
            "Title (conflict YYYY-MM-DD HOST)" beside it. An edit beats a delete.
            """,
        options: [
            OptionSpec("--watch"), OptionSpec("--other-server"), OptionSpec("--no-encryption"),
            OptionSpec("--passphrase-file", value: true),
            OptionSpec("--recovery-key-file", value: true), OptionSpec("--ask-passphrase"),
        ], writes: true, run: run)

    static func run(_ context: CommandContext) throws(CLIError) {
        let words = try context.positionals(min: 0, max: 2)
        switch words.first {
        case "init":
            guard words.count == 2 else { throw CLIError.usage("sync init needs the server's URL", command: context.command) }
            let keys = try keys(context)
            let database = try context.openDatabase(create: true)
            let setup: SyncSetup
            do {
                setup = try SyncEngine.initialize(
                    database: database, server: words[1], keys: keys, keepingKey: !context.arguments.has("--ask-passphrase"))
            } catch {
                throw cliError(error, context)
            }
            try context.finish(database)
            context.output.info(
                "\(context.databasePath): syncs with \(SyncStatus.redacted(words[1]))" + (setup.encrypted ? ", end-to-end encrypted" : ""))
            if let recovery = setup.recoveryKey { showRecoveryKey(recovery, context) }
        case "encrypt", "rotate-key":
            guard words.count == 1 else { throw CLIError.usage("sync \(words[0]) takes no argument", command: context.command) }
            let database = try context.openDatabase()
            let setup: SyncSetup
            do throws(SyncError) {
                let passphrase = try Passphrase.given(context.arguments.value("--passphrase-file"), creating: true)
                setup =
                    words[0] == "encrypt"
                    ? try SyncEngine.encryptServer(database: database, passphrase: passphrase)
                    : try SyncEngine.rotateKey(database: database, passphrase: passphrase)
            } catch { throw cliError(error, context) }
            try context.finish(database)
            context.output.info(
                "\(context.databasePath): "
                    + (words[0] == "encrypt" ? "the server is end-to-end encrypted now" : "the server's key is a new one now"))
            if let recovery = setup.recoveryKey { showRecoveryKey(recovery, context) }
        case "passphrase":
            guard words.count == 1 else { throw CLIError.usage("sync passphrase takes no argument", command: context.command) }
            let database = try context.openDatabase()
            do throws(SyncError) {
                let new = try Passphrase.given(context.arguments.value("--passphrase-file"), creating: true)
                try SyncEngine.changePassphrase(database: database, to: new)
            } catch { throw cliError(error, context) }
            try context.finish(database)
            context.output.info("\(context.databasePath): the server's key is wrapped with the new passphrase")
        case "set-url":
            guard words.count == 2 else { throw CLIError.usage("sync set-url needs the server's URL", command: context.command) }
            let database = try context.openDatabase()
            do {
                try SyncEngine.changeServer(
                    database: database, to: words[1], allowingAnotherServer: context.arguments.has("--other-server"))
            } catch { throw cliError(error, context) }
            try context.finish(database)
            context.output.info("\(context.databasePath): syncs with \(SyncStatus.redacted(words[1]))")
        case "status":
            guard words.count == 1 else { throw CLIError.usage("sync status takes no argument", command: context.command) }
            try status(context)
        case nil:
            let database = try context.openDatabase()
            let key = try unlockedKey(database, context)
            if context.arguments.has("--watch") { try watch(database, key, context) } else { try once(database, key, context) }
            try context.finish(database)
        case let word?:
            throw CLIError.usage(
                "unknown sync action '\(word)': init, set-url, encrypt, rotate-key, passphrase, status, or none", command: context.command)
        }
    }

    /// Prints a new recovery key on stdout, once: the one copy there will ever be.
    private static func showRecoveryKey(_ recovery: String, _ context: CommandContext) {
        context.output.lines([
            "recovery key (write it down: it opens the server's notes if the passphrase is lost, and is shown only now):", recovery,
        ])
    }

    /// What `sync init` does about encryption, from its options: encrypted unless `--no-encryption`.
    private static func keys(_ context: CommandContext) throws(CLIError) -> SyncKeys {
        let file = context.arguments.value("--passphrase-file")
        let recovery = context.arguments.value("--recovery-key-file")
        let readable = context.arguments.has("--no-encryption")
        guard [file != nil, recovery != nil, readable].filter({ $0 }).count <= 1 else {
            throw CLIError.usage(
                "sync init takes one of --passphrase-file, --recovery-key-file and --no-encryption", command: context.command)
        }
        if readable { return .readable }
        if let recovery {
            // Read now, bounded as a passphrase file is (the file could be anything, /dev/zero included).
            do throws(SyncError) {
                return .recoveryKey(String(decoding: try Passphrase.read(file: recovery, what: "recovery key file"), as: UTF8.self))
            } catch { throw cliError(error, context) }
        }
        return .passphrase { creating throws(SyncError) in try Passphrase.given(file, creating: creating) }
    }

    /// The server's key unlocked with the passphrase (`--passphrase-file`, else asked on the
    /// terminal), for a database that syncs encrypted without keeping its key here; nil otherwise.
    private static func unlockedKey(_ database: RecordDatabase, _ context: CommandContext) throws(CLIError) -> UnlockedKey? {
        guard SyncEngine.needsPassphrase(databasePath: database.path) else { return nil }
        do throws(SyncError) {
            let passphrase = try Passphrase.given(context.arguments.value("--passphrase-file"), creating: false)
            return try SyncEngine.unlock(database: database, passphrase: passphrase)
        } catch { throw cliError(error, context) }
    }

    private static func once(_ database: RecordDatabase, _ key: UnlockedKey?, _ context: CommandContext) throws(CLIError) {
        let report: SyncReport
        let showsProgress = FileSystem.stderrIsTerminal && !context.output.quiet
        var bars: [SyncProgress.Direction: ProgressBar] = [:]
        do throws(SyncError) {
            let engine: SyncEngine
            do { engine = try SyncEngine(database: database, key: key) } catch {
                SyncEngine.recordFailure(error, databasePath: database.path)
                throw error
            }
            if showsProgress {
                // One bar a direction, drawn once there is something to move (a sync that finds nothing shows none).
                engine.progress = { moved in
                    guard moved.total > 0 else { return }
                    let bar =
                        bars[moved.direction]
                        ?? ProgressBar(
                            label: moved.direction == .down ? "sync: fetched" : "sync: pushed", total: moved.total, enabled: true)
                    bars[moved.direction] = bar
                    bar.advance(by: moved.records - bar.count, detail: Formatting.bytes(moved.bytes))
                }
            }
            report = try engine.sync()
        } catch { throw cliError(error, context) }
        for bar in bars.values { bar.finish() }
        print(report, database, context)
        if !report.failures.isEmpty {
            throw CLIError(
                .io, "sync", "\(report.failures.count) records could not be pushed (see 'notesfs sync status'); the rest is synced")
        }
    }

    /// Syncs, then waits for a change on either side and syncs again, until killed; errors back
    /// off (1 s doubling to 60 s) and never end the loop (``BackgroundSync``).
    private static func watch(_ database: RecordDatabase, _ key: UnlockedKey?, _ context: CommandContext) throws(CLIError) {
        let loop: BackgroundSync
        do { loop = try BackgroundSync() } catch { throw cliError(error, context) }
        let ended = loop.run(database: database, key: key) { result in
            switch result {
            case .success(let report): print(report, database, context)
            case .failure(.notConfigured): break  // ends the loop: said once, below
            case .failure(let error): context.output.error(cliError(error, context))
            }
        }
        if let ended { throw cliError(ended, context) }
    }

    /// Where the record `name` shows (its path in the tree), else its record name.
    static func shownRecord(_ name: String, _ contents: FolderContents) -> String {
        ShellQuoting.shown(contents.entry(for: RecordID(recordName: name))?.displayPath ?? name)
    }

    private static func print(_ report: SyncReport, _ database: RecordDatabase, _ context: CommandContext) {
        let contents = FolderContents(database: database)
        for notice in report.notices { context.output.info(notice) }
        context.output.info(
            "synced: \(report.pushed) pushed, \(report.fetched) fetched, \(report.merged) merged, \(report.conflictCopies.count) conflict copies"
        )
        for copy in report.conflictCopies { context.output.info("conflict: kept your text as '\(copy.title)'") }
        for failure in report.failures {
            context.output.error(CLIError(.io, "sync", "not pushed: \(ShellQuoting.shown(failure.recordName)): \(shown(failure.reason))"))
        }
        for entry in report.decided {
            context.output.info(
                "both machines changed \(entry.key) of \(shownRecord(entry.recordName, contents)): kept '\(shown(entry.kept))' (the change that reached the server last), dropped '\(shown(entry.dropped))'"
            )
        }
        for entry in report.setAside.prefix(SyncReport.setAsideShownLimit) {
            context.output.error(
                CLIError(.io, "sync", "server record set aside: \(ShellQuoting.shown(entry.recordName)): \(shown(entry.reason))"))
        }
        if report.setAside.count > SyncReport.setAsideShownLimit {
            let more = report.setAside.count - SyncReport.setAsideShownLimit
            context.output.error(CLIError(.io, "sync", "\(more) more server records set aside (see notesfs sync status)"))
        }
    }

    /// A message that may quote the server's text (a record name, a type): printable, one line.
    private static func shown(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { ShellQuoting.isPrintable($0) ? $0 : "?" }))
    }

    private static func status(_ context: CommandContext) throws(CLIError) {
        let database = try context.openDatabase()
        let status: SyncStatus?
        do { status = try SyncStatus.read(database: database) } catch { throw cliError(error, context) }
        guard let status else { throw cliError(.notConfigured(path: context.databasePath), context) }
        if context.output.json {
            context.output.json(
                .object([
                    ("server", .string(status.server)), ("encrypted", .bool(status.keyID != nil)),
                    ("keyID", status.keyID.map(JSONValue.string) ?? .null),
                    ("lastSync", status.lastSync.map { .string(Formatting.iso($0)) } ?? .null),
                    ("lastError", status.lastError.map(JSONValue.string) ?? .null), ("pendingChanges", .int(Int64(status.pendingChanges))),
                    ("serverSeq", .int(status.serverSeq)),
                    (
                        "conflicts",
                        .array(
                            status.conflicts.map {
                                .object([
                                    ("recordName", .string($0.recordName)), ("copyRecordName", .string($0.copyRecordName)),
                                    ("title", .string($0.title)), ("date", .string(Formatting.iso($0.date))),
                                ])
                            })
                    ),
                    (
                        "failures",
                        .array(
                            status.failures.map {
                                .object([
                                    ("recordName", .string($0.recordName)), ("reason", .string($0.reason)),
                                    ("since", .string(Formatting.iso($0.since))),
                                ])
                            })
                    ),
                    (
                        "decided",
                        .array(
                            status.decided.map {
                                .object([
                                    ("recordName", .string($0.recordName)), ("recordType", .string($0.recordType)),
                                    ("key", .string($0.key)),
                                    ("kept", .string($0.kept)), ("dropped", .string($0.dropped)),
                                    ("date", .string(Formatting.iso($0.date))),
                                ])
                            })
                    ),
                    ("clamped", .array(status.clamped.map { .string($0) })),
                    ("setAsideCount", .int(Int64(status.setAsideCount))),
                    (
                        "setAsideSummaries",
                        .array(
                            status.setAsideSummaries.map {
                                .object([
                                    ("reason", .string($0.reason)), ("count", .int(Int64($0.count))),
                                    ("names", .array($0.names.map { .string($0) })), ("lowestSeq", .int($0.lowestSeq)),
                                ])
                            })
                    ),
                    (
                        "setAside",
                        .array(
                            status.setAside.map {
                                .object([
                                    ("recordName", .string($0.recordName)), ("recordType", .string($0.recordType)),
                                    ("seq", .int($0.seq)), ("reason", .string($0.reason)), ("since", .string(Formatting.iso($0.since))),
                                ])
                            })
                    ),
                ]))
        } else {
            var lines = ["server: \(status.server)"]
            if let keyID = status.keyID {
                lines.append(
                    "encryption: end-to-end, key \(keyID.prefix(8))"
                        + (status.hasKey ? "" : " (not on this machine: run 'notesfs sync init URL' with the passphrase)"))
            } else {
                lines.append("encryption: none (the server can read every note)")
            }
            lines.append("last sync: \(status.lastSync.map(Formatting.iso) ?? "never")")
            if let error = status.lastError { lines.append("last error: \(error)") }
            lines.append("pending changes: \(status.pendingChanges)")
            lines.append("conflicts: \(status.conflicts.count)")
            lines += status.conflicts.map { "  \(Formatting.iso($0.date))  \($0.title)" }
            if !status.failures.isEmpty {
                lines.append("records that cannot be pushed: \(status.failures.count)")
                lines += status.failures.map { "  \(ShellQuoting.shown($0.recordName)): \(shown($0.reason))" }
            }
            if !status.decided.isEmpty {
                lines.append("changed on two machines, the change that reached the server last kept: \(status.decided.count)")
                let contents = FolderContents(database: database)
                lines += status.decided.map {
                    "  \(Formatting.iso($0.date))  \(shown($0.recordType)) \(shownRecord($0.recordName, contents)) \(shown($0.key)): kept '\(shown($0.kept))', dropped '\(shown($0.dropped))'"
                }
            }
            if !status.clamped.isEmpty {
                lines.append("server values clamped (modes, dates no server may set): \(status.clamped.count)")
                lines += status.clamped.map { "  \(shown($0))" }
            }
            if status.setAsideCount > 0 {
                lines.append(
                    "server records set aside: \(status.setAsideCount) (not applied here; a newer server version or notesfs tries again)")
                lines += status.setAside.map {
                    "  \(ShellQuoting.shown($0.recordName)) (\(shown($0.recordType)), server version \($0.seq)): \(shown($0.reason))"
                }
                lines += status.setAsideSummaries.map {
                    "  \($0.count) more: \(shown($0.reason)) (\($0.names.map(ShellQuoting.shown).joined(separator: ", "))\($0.count > $0.names.count ? ", …" : ""))"
                }
            }
            context.output.lines(lines)
        }
    }

    static func cliError(_ error: SyncError, _ context: CommandContext) -> CLIError {
        switch error {
        case .notConfigured: CLIError(.usage, context.databasePath, error.description)
        case .newerServerSchema: CLIError(.notADatabase, "server", error.description)
        case .store(let failure): CLIError.store(failure, subject: context.databasePath)
        case .server, .state, .damagedServerRecord: CLIError(.io, "sync", error.description)
        case .encryption, .keys: CLIError(.io, "sync", error.description)
        }
    }
}
