import Foundation
import Notes
import RecordStore
import Synchronization
import TestSupport
import Testing

/// A move's link rewrites when another process commits between every plan and its commit
/// (``LinkRewriteCommit``): the notes it committed before the move's commit are rewritten too.
@Suite struct LinkRewriteCommitTests {
    /// Another instance of the database (a lock descriptor of its own, as another process has)
    /// commits a note linking to the moved one during every plan, and the plan waits for it (up
    /// to 300 ms). Before, all 20 tries were refused and the last committed without the check,
    /// missing the note committed during its plan; now the third try holds the others off.
    @Test func notesOtherProcessesCommitDuringEveryPlanAreRewritten() async throws {
        let notes = try makeManager()
        let database = notes.database
        let hub = try await notes.newFolder(name: "Hub")
        let target = try await notes.save(note: Note(title: "Target", text: "the target", folder: hub.recordID))
        let first = try await notes.save(note: Note(title: "Linker", text: "see [[Hub/Target]]\n"))
        let other = try RecordDatabase(path: database.path, backgroundThread: false)
        let index = NotesSearchIndex(database: database)
        let item = MovedItem.file(target.recordID, folder: hub.recordID, fileName: "Moved.md")
        let written = Mutex<[RecordID]>([])
        let workers = Mutex<[BackgroundWorker]>([])
        let outcome = try LinkRewriteCommit.run(
            on: database,
            plan: { earlier in
                let rewrites = try index.linkRewrites(for: item, revising: earlier)
                // Another process commits a note linking to the target after the plan's token.
                let k = written.withLock { $0.count }
                let linker = Note(title: "Theirs \(k)", text: "see [[Hub/Target]] \(k)\n")
                written.withLock { $0.append(linker.recordID) }
                let landed = ConditionLock<Bool>(false)
                let worker = BackgroundWorker.start(name: "test.other") { _ in
                    _ = try? other.modify(saving: [linker.record])
                    landed.withLock { $0 = true }
                }
                _ = landed.wait(until: .now + .milliseconds(300)) { $0 ? true : nil }
                workers.withLock { $0.append(worker) }
                return rewrites
            },
            commit: { rewrites in
                var moved = try database.record(for: target.recordID)
                moved["title"] = .string("Moved")
                let others = rewrites.notes.map(\.record).filter { $0.recordID != target.recordID }
                try database.modify(saving: [moved] + others, unchangedSince: rewrites.token)
                return try #require(database.metadata(for: target.recordID)).seq
            })
        #expect(outcome.attempts == LinkRewriteCommit.unheldAttempts + 1)
        #expect(!outcome.unchecked)
        let movedAt = outcome.value
        // Every note of the other process: rewritten when committed before the move, and left
        // as written (a link broken when written) when after.
        for worker in workers.withLock({ $0 }) { worker.join() }
        try database.refresh()
        #expect(try database.record(for: first.recordID)["text"] == .string("see [[Hub/Moved]]\n"))
        var before = 0
        for id in written.withLock({ $0 }) {
            let stored = try #require(database.metadata(for: id))
            let text = try database.record(for: id)["text"]?.stringValue ?? ""
            // A note the move rewrote was saved again by its commit: its seq is the move's.
            if stored.seq <= movedAt {
                before += 1
                #expect(text.hasPrefix("see [[Hub/Moved]]"), "committed before the move, not rewritten: \(text)")
            } else {
                #expect(text.hasPrefix("see [[Hub/Target]]"), "committed after the move: \(text)")
            }
        }
        #expect(before == LinkRewriteCommit.unheldAttempts)
    }
}
