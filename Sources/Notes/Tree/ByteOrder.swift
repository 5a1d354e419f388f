import Foundation

extension String {
    /// Whether this string's UTF-8 bytes sort before `other`'s, byte by byte (`memcmp`, then the
    /// shorter first): the order file names are listed in. One `memcmp` where
    /// `utf8.lexicographicallyPrecedes` steps through both views a byte at a time (a quarter of
    /// listing a folder of 1,000, `perf`).
    func precedesInByteOrder(_ other: String) -> Bool {
        var a = self
        var b = other
        return a.withUTF8 { x in
            b.withUTF8 { y in
                let common = Swift.min(x.count, y.count)
                let order = common == 0 ? 0 : memcmp(x.baseAddress!, y.baseAddress!, common)
                return order != 0 ? order < 0 : x.count < y.count
            }
        }
    }
}
