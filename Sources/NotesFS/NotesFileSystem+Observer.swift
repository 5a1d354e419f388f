import RecordStore

extension NotesFileSystem {
    /// Calls `handler` after every commit of the mounted database (this mount's own writes have
    /// `isExternal` false), on the committing thread with no lock held: keep it short. Call it
    /// after ``openDatabase()``.
    public func observeDatabase(_ handler: @escaping @Sendable (RecordStoreChange) -> Void) {
        database.addObserver(handler)
    }

    /// Calls `handler` (on the closing request's thread, no lock held) when the last writable
    /// handle of a file closes that ``recordsBeingWritten()`` held back: a sync can push it now,
    /// even when its bytes were saved before (by another handle's close) and this close commits nothing.
    public func onWriterClosed(_ handler: @escaping @Sendable () -> Void) {
        writerClosedHandlers.withLock { $0.append(handler) }
    }

    /// The mounted database, for a writer that shares it (a sync engine): its commits must say
    /// `asExternalChange`, so that this mount tells the kernel about them. Call it after
    /// ``openDatabase()``.
    public var recordDatabase: RecordDatabase { database }
}
