/// The names of the fields the notes layer's records keep, for code that reads a record's
/// metadata (the store's in-memory index) or builds a query, where a wrapper (``Note``,
/// ``Folder``, ``Attachment``, …) would read the whole record.
public enum FieldName {
    /// A note's title.
    public static let title = "title"
    /// A note's UTF-8 text (absent when its bytes are kept in ``content``).
    public static let text = "text"
    /// A note's bytes as an asset (not UTF-8, or over ``Note/maxInlineTextBytes``), an attachment's content.
    public static let content = "content"
    /// The stored name of a folder, an attachment, a symlink, a special file or a hard link.
    public static let name = "name"
    /// The folder a folder is in (nil at the root).
    public static let parent = "parent"
    /// The folder a note, attachment, symlink, special file or hard link is in (nil at the root).
    public static let folder = "folder"
    /// What a symlink points to, or the record a hard link (``Link``) names.
    public static let target = "target"
    /// The note (or other record) a ``Version`` keeps a state of.
    public static let note = "note"
    /// POSIX ownership and mode (``Ownership``).
    public static let mode = "mode", uid = "uid", gid = "gid"
}
