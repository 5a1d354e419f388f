import Foundation
import TestSupport
import Testing

@testable import RecordStore

/// A query that reads record files while commits go on, in this process and in another instance.
@Suite struct QueryBesideCommitsTests {
    /// The query's file scan meets a damaged record file while the journal moves (so it scans
    /// again under the shared commit lock) and while a commit of the same instance waits for the
    /// commit lock holding the state lock: the careful read of the damaged file takes the state
    /// lock, so it must come after the shared commit lock is released, or neither side goes on.
    @Test func aQueryMeetingADamagedFileFinishesBesideCommits() throws {
        let path = makeTemporaryDirectory()
        let db = try makeDatabase(path)
        let text = String(repeating: "lorem ipsum ", count: 40)  // over the small-field limit: read from the file
        for batch in 0..<4 {
            try db.modify(saving: (0..<500).map { note("n\(batch)-\($0)", folder: nil, text: text + "\($0)") })
        }
        let other = try makeDatabase(path)
        // Holds the query's needle (the raw prefilter lets it through) but does not decode. (After
        // the second open, whose recovery would write it again from the journal.)
        try Data("{\"fields\":{\"text\":\"nowhere".utf8).write(to: URL(fileURLWithPath: db.layout.recordPath("n0-0")))
        let committers = [db, other].enumerated().map { i, database in
            BackgroundWorker.start(name: "test.commit\(i)") { worker in
                var k = 0
                while !worker.isStopping {
                    _ = try? database.modify(saving: [note("c\(i)-\(k)", folder: nil, text: "x")])
                    k += 1
                }
            }
        }
        let done = ConditionLock<Bool>(false)
        let predicate = try RecordStore.Predicate(format: "text CONTAINS 'nowhere'")
        let query = BackgroundWorker.start(name: "test.query") { _ in
            for _ in 0..<5 { _ = db.queryMetadata(Query(recordType: "Note", predicate: predicate)) }
            done.withLock { $0 = true }
        }
        let finished = done.wait(until: .now + .seconds(30)) { $0 ? true : nil } ?? false
        for committer in committers { committer.stop() }
        #expect(finished, "the query and a commit wait for each other")
        guard finished else { return }  // the threads stay blocked: not joined
        for committer in committers { committer.join() }
        query.join()
    }
}
