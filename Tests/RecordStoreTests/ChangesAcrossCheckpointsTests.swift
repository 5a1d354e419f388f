import Foundation
import Synchronization
import TestSupport
import Testing

@testable import RecordStore

/// Another instance's commits and checkpoints (another process's, as far as the store can tell):
/// every change reaches this one, through change tokens and through its observers.
@Suite struct ChangesAcrossCheckpointsTests {
    @Test(arguments: [1, 3, 7]) func everyCommitOfAnotherInstanceIsListedOnce(_ readEvery: Int) throws {
        let path = makeTemporaryDirectory("changes-across")
        let writer = try makeDatabase(path)
        try writer.modify(saving: [folder("f")])
        let reader = try makeDatabase(path)
        let observed = Mutex<Set<String>>([])
        _ = reader.addObserver { change in
            observed.withLock { seen in
                if change.isReset { seen.insert("RESET") }
                for metadata in change.saved { seen.insert(metadata.recordID.recordName) }
            }
        }
        var token = reader.currentToken
        var listed = Set<String>()
        let text = String(repeating: "a long line of text ", count: 4_000)  // 80 KB: a checkpoint every 13 commits
        for i in 0..<120 {
            try writer.modify(saving: [note("n\(i)", folder: "f", text: text)])
            if i % readEvery == 0 {
                let set = try reader.changes(since: token)
                listed.formUnion(set.changed.map(\.recordID.recordName))
                token = set.token
            }
        }
        let set = try reader.changes(since: token)
        listed.formUnion(set.changed.map(\.recordID.recordName))
        let all = Set((0..<120).map { "n\($0)" })
        #expect(listed.isSuperset(of: all), "missing: \(all.subtracting(listed).sorted())")
        let seen = observed.withLock { $0 }
        #expect(seen.contains("RESET") || seen.isSuperset(of: all), "not observed: \(all.subtracting(seen).sorted())")
        #expect(reader.referrers(to: RecordID(recordName: "f"), key: "folder").count == 120)
        #expect(Set(reader.metadata(where: { $0.recordType == "Note" }).map(\.recordID.recordName)) == all)
    }
}
