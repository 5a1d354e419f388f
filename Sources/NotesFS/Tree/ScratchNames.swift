/// Editor scratch files (DESIGN.md §4): held in memory while mounted, never saved as records.
///
/// Swap files `.x.swp` (and `.swo`, `.swx`, `.swpx`), backups `x~`, emacs autosaves `#x#` and lock
/// links `.#x`, vim's `4913` write probe, `sed??????` temp files of `sed -i`, GNOME's
/// `.goutputstream-*`, VS Code's `*.vsctmp`, JetBrains IDEs' safe-write `*___jb_tmp___` and
/// `*___jb_old___`.
enum ScratchNames {
    static func isScratch(_ name: String) -> Bool {
        if name.hasSuffix("~") { return true }
        if name.hasPrefix("#") && name.hasSuffix("#") && name.count > 1 { return true }
        if name.hasPrefix(".#") { return true }
        if name == "4913" { return true }
        if name.hasPrefix(".goutputstream-") { return true }
        if name.hasSuffix(".vsctmp") { return true }
        if name.hasSuffix("___jb_tmp___") || name.hasSuffix("___jb_old___") { return true }
        if name.hasPrefix("."), [".swp", ".swo", ".swx", ".swpx"].contains(where: { name.hasSuffix($0) }) { return true }
        if name.hasPrefix("sed"), name.count == 9, name.dropFirst(3).allSatisfy({ $0.isLetter || $0.isNumber }) { return true }
        return false
    }
}
