import Foundation
import Sync

#if canImport(Glibc)
    @preconcurrency import Glibc
#endif

/// Where `sync init` and `sync passphrase` get a passphrase: a file (`--passphrase-file`, for
/// scripts: its bytes, one trailing newline dropped), else the terminal (`/dev/tty`, echo off;
/// asked twice when it makes a new one). Never an argument: those show in `ps`.
enum Passphrase {
    /// The most bytes a passphrase file may hold (a passphrase is a line, not a file).
    static let fileLimit = 4096

    /// The passphrase in the file at `path` when one was given (`--passphrase-file`), else asked
    /// on the terminal (twice when `creating`).
    ///
    /// - Throws: ``SyncError/keys(_:)``.
    static func given(_ path: String?, creating: Bool) throws(SyncError) -> [UInt8] {
        if let path { return try read(file: path) }
        return try ask(creating: creating)
    }

    /// The passphrase in `path` (or the recovery key: `what` names the file in the messages).
    /// At most ``fileLimit`` bytes are read, whatever the file holds.
    ///
    /// - Throws: ``SyncError/keys(_:)`` for a file that cannot be read, is empty or too large.
    static func read(file path: String, what: String = "passphrase file") throws(SyncError) -> [UInt8] {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw .keys("\(what) \(path): \(String(cString: strerror(errno)))")
        }
        defer { try? handle.close() }
        let data = (try? handle.read(upToCount: fileLimit + 1)) ?? nil
        guard let data else { throw .keys("\(what) \(path): cannot be read") }
        guard data.count <= fileLimit else { throw .keys("\(what) \(path): over \(fileLimit) bytes") }
        var bytes = [UInt8](data)
        if bytes.last == UInt8(ascii: "\n") { bytes.removeLast() }
        if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        guard !bytes.isEmpty else { throw .keys("\(what) \(path) is empty") }
        return bytes
    }

    /// Asks on the terminal, with echo off; twice when `creating` (the two must match).
    ///
    /// - Throws: ``SyncError/keys(_:)`` when there is no terminal (say `--passphrase-file`) or the two differ.
    static func ask(creating: Bool, what: String = "passphrase") throws(SyncError) -> [UInt8] {
        let tty = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard tty >= 0 else {
            throw .keys(
                "a \(what) is needed and there is no terminal to ask on: give --passphrase-file FILE"
                    + (creating ? " (or --no-encryption for a server that can read every note)" : ""))
        }
        defer { close(tty) }
        let first = try prompt(
            tty, creating ? "new \(what) for the server (at least \(SyncEngine.minimumPassphraseLength) characters): " : "\(what): ")
        guard creating else { return first }
        let second = try prompt(tty, "the same \(what) again: ")
        guard first == second else { throw .keys("the two \(what)s differ; nothing was changed") }
        return first
    }

    /// One line read from `tty` after `text`, echo off (restored after, even on failure).
    private static func prompt(_ tty: Int32, _ text: String) throws(SyncError) -> [UInt8] {
        _ = text.withCString { write(tty, $0, strlen($0)) }
        var saved = termios()
        let isTerminal = tcgetattr(tty, &saved) == 0
        if isTerminal {
            var quiet = saved
            quiet.c_lflag &= ~tcflag_t(ECHO)
            _ = tcsetattr(tty, TCSAFLUSH, &quiet)
        }
        defer {
            if isTerminal { _ = tcsetattr(tty, TCSAFLUSH, &saved) }
            _ = write(tty, "\n", 1)
        }
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while line.count <= fileLimit {
            let count = Glibc.read(tty, &byte, 1)
            if count < 0, errno == EINTR { continue }
            guard count == 1, byte != UInt8(ascii: "\n") else { break }
            line.append(byte)
        }
        if line.last == UInt8(ascii: "\r") { line.removeLast() }
        guard !line.isEmpty else { throw .keys("no passphrase given; nothing was changed") }
        guard line.count <= fileLimit else { throw .keys("a passphrase over \(fileLimit) bytes; nothing was changed") }
        return line
    }
}
