/// Line-based three-way merge of texts, as `diff3 -m`: changes of each side against the base are
/// taken when they do not overlap; two insertions at one place that remove nothing are both taken
/// (the server's first); other overlapping changes that differ are a conflict.
public enum TextMerge {
    /// The merged text, or nil when the two sides changed the same lines differently (or the
    /// texts are too large to compare: then nothing is merged and both are kept).
    public static func merge(base: String, local: String, server: String) -> String? {
        if local == server || base == local { return server }
        if base == server { return local }
        let o = lines(base)
        let a = lines(local)
        let b = lines(server)
        guard let matchA = matches(o, a), let matchB = matches(o, b) else { return nil }
        var merged: [Substring] = []
        var (io, ia, ib) = (0, 0, 0)
        while io < o.count || ia < a.count || ib < b.count {
            if io < o.count, matchA[io] == ia, matchB[io] == ib {
                merged.append(o[io])  // stable: unchanged on both sides
                (io, ia, ib) = (io + 1, ia + 1, ib + 1)
                continue
            }
            // The next base line both sides kept ends this unstable chunk.
            var end = io
            while end < o.count, matchA[end] == nil || matchB[end] == nil { end += 1 }
            let (endA, endB) = end < o.count ? (matchA[end]!, matchB[end]!) : (a.count, b.count)
            let chunkO = o[io..<end]
            let chunkA = a[ia..<endA]
            let chunkB = b[ib..<endB]
            if chunkA.elementsEqual(chunkO) {
                merged += chunkB
            } else if chunkB.elementsEqual(chunkO) || chunkA.elementsEqual(chunkB) {
                merged += chunkA
            } else if chunkO.isEmpty, !base.isEmpty {
                // Both inserted lines at one place and removed none (two machines appending to a
                // log): both insertions, the server's first, as it was there first; the longer
                // when one starts with the other (it holds it). Not without a base: every line
                // would be an insertion of both sides.
                if chunkA.starts(with: chunkB) {
                    merged += chunkA
                } else if chunkB.starts(with: chunkA) {
                    merged += chunkB
                } else {
                    merged += chunkB
                    merged += chunkA
                }
            } else {
                return nil
            }
            (io, ia, ib) = (end, endA, endB)
        }
        return merged.joined(separator: "\n")
    }

    /// Lines without their newlines; joining with "\n" gives the text back exactly.
    static func lines(_ text: String) -> [Substring] { text.split(separator: "\n", omittingEmptySubsequences: false) }

    /// The largest product of changed-region sizes compared (a longest common subsequence table).
    static let comparisonLimit = 16_000_000

    /// For each line of `base`, the index of the line of `other` it is matched with in a longest
    /// common subsequence (nil for a line `other` removed or changed); nil when too large to compare.
    static func matches(_ base: [Substring], _ other: [Substring]) -> [Int?]? {
        var result = [Int?](repeating: nil, count: base.count)
        var prefix = 0
        while prefix < base.count, prefix < other.count, base[prefix] == other[prefix] {
            result[prefix] = prefix
            prefix += 1
        }
        var suffix = 0
        while suffix < base.count - prefix, suffix < other.count - prefix,
            base[base.count - 1 - suffix] == other[other.count - 1 - suffix]
        {
            result[base.count - 1 - suffix] = other.count - 1 - suffix
            suffix += 1
        }
        let n = base.count - prefix - suffix
        let m = other.count - prefix - suffix
        guard n > 0, m > 0 else { return result }
        guard n * m <= comparisonLimit else { return nil }
        // lengths[i][j]: LCS length of base[prefix+i...] and other[prefix+j...] (suffixes), flat.
        var lengths = [Int32](repeating: 0, count: (n + 1) * (m + 1))
        for i in stride(from: n - 1, through: 0, by: -1) {
            for j in stride(from: m - 1, through: 0, by: -1) {
                lengths[i * (m + 1) + j] =
                    base[prefix + i] == other[prefix + j]
                    ? lengths[(i + 1) * (m + 1) + j + 1] + 1
                    : max(lengths[(i + 1) * (m + 1) + j], lengths[i * (m + 1) + j + 1])
            }
        }
        var (i, j) = (0, 0)
        while i < n, j < m {
            if base[prefix + i] == other[prefix + j] {
                result[prefix + i] = prefix + j
                (i, j) = (i + 1, j + 1)
            } else if lengths[(i + 1) * (m + 1) + j] >= lengths[i * (m + 1) + j + 1] {
                i += 1
            } else {
                j += 1
            }
        }
        return result
    }
}
