import RecordStore

extension NotesFileSystem {
    /// Calls `handler` after every commit of the mounted database (this mount's own writes have
    /// `isExternal` false), on the committing thread with no lock held: keep it short. Call it
    /// after ``openDatabase()``.
    public func observeDatabase(_ handler: @escaping @Sendable (RecordStoreChange) -> Void) {
        database.addObserver(handler)
    }

    /// The mounted database, for a writer that shares it (a sync engine): its commits must say
    /// `asExternalChange`, so that this mount tells the kernel about them. Call it after
    /// ``openDatabase()``.
    public var recordDatabase: RecordDatabase { database }
}
