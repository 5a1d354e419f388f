/// What listing a large virtual directory costs, counted rather than timed: `ls -l` of
/// `.search/WORD` looks up every entry, and each lookup must not decide again whether the caller
/// may be told of every entry of the directory (that made `ls -l` of N hits cost N² decisions).

import Foundation
import Notes
import RecordStore
import TestSupport
import Testing

@testable import NotesFS

@Suite(.tags(.mount), .needsFUSE) struct VirtualListingCostTests {
    static let notes = 300

    /// Runs `ls -l DIRECTORY` (as uid:gid `id` with supplementary groups `groups` when `id` is
    /// given) and returns its lines, less the `total` line, and the decisions the mount made.
    private func listLong(_ m: NotesMount, _ directory: String, as id: uid_t? = nil, groups: [gid_t] = []) throws -> (
        lines: [String], decisions: Int
    ) {
        let before = m.fileSystem.state.withLock { $0.virtualNodes.permissionDecisions }
        var command = ["/bin/ls", "-l", directory]
        if let id {
            let groupOption = groups.isEmpty ? "--clear-groups" : "--groups=" + groups.map(String.init).joined(separator: ",")
            command = ["/usr/bin/setpriv", "--reuid=\(id)", "--regid=\(id)", groupOption] + command
        }
        let result = try run(command)
        #expect(result.status == 0, "\(result)")
        let after = m.fileSystem.state.withLock { $0.virtualNodes.permissionDecisions }
        let lines = result.out.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("total") }
        return (lines, after - before)
    }

    /// `ls -l` of a search of N hits decides each hit a few times in all, not N times each: by
    /// root, by another user (whose decisions read its supplementary groups), and again.
    @Test func listingEveryHitLongDecidesEachHitOnce() throws {
        try withNotesMount(
            mountOptions: ["allow_other"],
            seed: { db in
                try db.modify(saving: (0..<Self.notes).map { Note(title: "n\($0)", text: "wallaby \($0)").record })
            }
        ) { m in
            let directory = m.path(".search/wallaby")
            let limit = 3 * Self.notes
            let root = try listLong(m, directory)
            #expect(root.lines.count == Self.notes)
            #expect(root.decisions <= limit, "root: \(root.decisions) decisions for \(Self.notes) hits")
            let other = try listLong(m, directory, as: 1001, groups: [2000])
            #expect(other.lines.count == Self.notes)
            #expect(other.decisions <= limit, "another user: \(other.decisions) decisions for \(Self.notes) hits")
            let again = try listLong(m, directory, as: 1001, groups: [2000])
            #expect(again.lines.count == Self.notes)
            #expect(again.decisions <= limit, "again: \(again.decisions) decisions for \(Self.notes) hits")
        }
    }
}
