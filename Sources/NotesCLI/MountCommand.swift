import Foundation

/// `notesfs [DB] MOUNTPOINT [-f] [-d] [-s] [-o opt,...]`: the mount form (built in the mount issue).
enum MountCommand {
    /// Mounts and serves until unmounted or signalled; returns the exit status.
    static func run(_ arguments: [String]) -> Int32 {
        FileHandle.standardError.write(Data("notesfs: mounting is not built yet\n".utf8))
        return 70
    }
}
