/// A line diff of two texts (Myers' O((N+M)D) algorithm) printed as a unified diff, as `diff -u`.
///
/// Lines keep their terminator, so a last line without a newline differs from one with it and is
/// printed with `\ No newline at end of file`. Memory is bounded: past ``maximumEdits`` differing
/// lines (after the common head and tail are cut) the middle is shown as deleted and inserted whole.
enum LineDiff {
    /// The most edits the search looks for (its memory grows with their square: 2,000 take ~32 MB).
    static let maximumEdits = 2000

    enum Edit: Equatable {
        case same(Int, Int)  // old index, new index
        case delete(Int)
        case insert(Int)
    }

    /// Splits `text` into lines, each with its `\n` (the last may lack one).
    static func lines(_ text: String) -> [Substring] {
        var lines: [Substring] = []
        var start = text.startIndex
        var index = start
        while index < text.endIndex {
            let next = text.index(after: index)
            if text[index] == "\n" {
                lines.append(text[start..<next])
                start = next
            }
            index = next
        }
        if start < text.endIndex { lines.append(text[start...]) }
        return lines
    }

    /// The edit script turning `a` into `b`.
    static func edits(_ a: [Substring], _ b: [Substring]) -> [Edit] {
        var head = 0
        while head < a.count, head < b.count, a[head] == b[head] { head += 1 }
        var tail = 0
        while tail < a.count - head, tail < b.count - head, a[a.count - 1 - tail] == b[b.count - 1 - tail] { tail += 1 }
        var script = (0..<head).map { Edit.same($0, $0) }
        let oldMiddle = Array(a[head..<(a.count - tail)])
        let newMiddle = Array(b[head..<(b.count - tail)])
        script += middle(oldMiddle, newMiddle).map { edit in
            switch edit {
            case .same(let i, let j): .same(i + head, j + head)
            case .delete(let i): .delete(i + head)
            case .insert(let j): .insert(j + head)
            }
        }
        script += (0..<tail).map { Edit.same(a.count - tail + $0, b.count - tail + $0) }
        return script
    }

    /// Myers' greedy search with its trace, then the path walked back.
    private static func middle(_ a: [Substring], _ b: [Substring]) -> [Edit] {
        let (n, m) = (a.count, b.count)
        if n == 0 || m == 0 { return (0..<n).map(Edit.delete) + (0..<m).map(Edit.insert) }
        // Lines as integers: compared by number in the search.
        var ids: [Substring: Int] = [:]
        let x = a.map { line in
            ids[line]
                ?? {
                    ids[line] = ids.count
                    return ids.count - 1
                }()
        }
        let y = b.map { line in
            ids[line]
                ?? {
                    ids[line] = ids.count
                    return ids.count - 1
                }()
        }
        let limit = min(n + m, maximumEdits)
        let offset = limit + 1
        var v = [Int](repeating: 0, count: 2 * limit + 3)
        var trace: [[Int]] = []
        var found = false
        search: for d in 0...limit {
            trace.append(Array(v[(offset - d)...(offset + d)]))
            for k in stride(from: -d, through: d, by: 2) {
                var i = (k == -d || (k != d && v[offset + k - 1] < v[offset + k + 1])) ? v[offset + k + 1] : v[offset + k - 1] + 1
                var j = i - k
                while i < n, j < m, x[i] == y[j] {
                    i += 1
                    j += 1
                }
                v[offset + k] = i
                if i >= n, j >= m {
                    found = true
                    break search
                }
            }
        }
        guard found else { return (0..<n).map(Edit.delete) + (0..<m).map(Edit.insert) }
        // Walk back through the trace: each step's V before it was extended (trace[d] holds k in -d...d).
        var script: [Edit] = []
        var (i, j) = (n, m)
        for d in stride(from: trace.count - 1, through: 0, by: -1) {
            let before = trace[d]
            func value(_ k: Int) -> Int { before[k + d] }
            let k = i - j
            let previousK: Int
            if d == 0 {
                previousK = 0
            } else if k == -d || (k != d && value(k - 1) < value(k + 1)) {
                previousK = k + 1
            } else {
                previousK = k - 1
            }
            let previousI = d == 0 ? 0 : value(previousK)
            let previousJ = previousI - previousK
            while i > previousI, j > previousJ, i > 0, j > 0, x[i - 1] == y[j - 1] {
                i -= 1
                j -= 1
                script.append(.same(i, j))
            }
            if d > 0 {
                if previousK == k + 1 {
                    j -= 1
                    script.append(.insert(j))
                } else {
                    i -= 1
                    script.append(.delete(i))
                }
            }
        }
        return script.reversed()
    }

    /// A unified diff (`--- old`, `+++ new`, hunks with `context` lines around each change); empty
    /// when the texts are equal.
    static func unified(_ old: String, _ new: String, oldLabel: String, newLabel: String, context: Int = 3) -> String {
        let a = lines(old)
        let b = lines(new)
        let script = edits(a, b)
        let changed = script.indices.filter { if case .same = script[$0] { false } else { true } }
        guard !changed.isEmpty else { return "" }
        var out = "--- \(oldLabel)\n+++ \(newLabel)\n"
        var hunkStart = 0
        var groups: [ClosedRange<Int>] = []
        for (n, index) in changed.enumerated() {
            if n == 0 {
                hunkStart = index
            } else if index - changed[n - 1] > 2 * context + 1 {
                groups.append(hunkStart...changed[n - 1])
                hunkStart = index
            }
        }
        groups.append(hunkStart...changed.last!)
        func line(_ text: Substring, _ mark: String) -> String {
            text.hasSuffix("\n") ? mark + text : mark + text + "\n\\ No newline at end of file\n"
        }
        for group in groups {
            let lower = max(0, group.lowerBound - context)
            let upper = min(script.count - 1, group.upperBound + context)
            var body = ""
            var (oldStart, newStart, oldCount, newCount) = (-1, -1, 0, 0)
            // Where the hunk starts in each file (a side with no line in it: the line before).
            var (oldBefore, newBefore) = (0, 0)
            for edit in script[..<lower] {
                switch edit {
                case .same: (oldBefore, newBefore) = (oldBefore + 1, newBefore + 1)
                case .delete: oldBefore += 1
                case .insert: newBefore += 1
                }
            }
            for edit in script[lower...upper] {
                switch edit {
                case .same(let i, let j):
                    if oldStart < 0 { oldStart = i }
                    if newStart < 0 { newStart = j }
                    body += line(a[i], " ")
                    oldCount += 1
                    newCount += 1
                case .delete(let i):
                    if oldStart < 0 { oldStart = i }
                    body += line(a[i], "-")
                    oldCount += 1
                case .insert(let j):
                    if newStart < 0 { newStart = j }
                    body += line(b[j], "+")
                    newCount += 1
                }
            }
            let oldFirst = oldCount == 0 ? oldBefore : (oldStart < 0 ? oldBefore : oldStart) + 1
            let newFirst = newCount == 0 ? newBefore : (newStart < 0 ? newBefore : newStart) + 1
            out += "@@ -\(range(oldFirst, oldCount)) +\(range(newFirst, newCount)) @@\n" + body
        }
        return out
    }

    private static func range(_ first: Int, _ count: Int) -> String { count == 1 ? "\(first)" : "\(first),\(count)" }
}
