import RecordStore

/// The reasons the notes layer gives a modify (``RecordDatabase/modify(saving:deleting:savePolicy:asExternalChange:reason:)``),
/// read by ``VersionPolicy``. No reason means an ordinary edit.
extension ModifyReason {
    /// A save: its version is coalesced (at most one per note per ``HistorySettings/interval``).
    public static let edit = ModifyReason("edit")
    /// A save that always keeps the version it replaces (the CLI's `note edit`).
    public static let editKeepingVersion = ModifyReason("edit-keep")
    /// `note restore` and `note undelete`.
    public static let restore = ModifyReason("restore")
    /// A sync applying server changes: keeps no version (the machine that made a change kept its
    /// own, and it syncs), except of the records named `merge` or `conflict` in ``records``.
    public static let sync = ModifyReason("sync")
    /// Retention deleting old versions.
    public static let prune = ModifyReason("prune")

    /// The per-record reasons of a sync page.
    public static let merge = "merge"
    public static let conflict = "conflict"
}
