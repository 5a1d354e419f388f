import RecordStore

extension NotesFileSystem {
    /// Calls `handler` after every commit of the mounted database (this mount's own writes have
    /// `isExternal` false), on the committing thread with no lock held: keep it short. Call it
    /// after ``openDatabase()``.
    public func observeDatabase(_ handler: @escaping @Sendable (RecordStoreChange) -> Void) {
        database.addObserver(handler)
    }
}
