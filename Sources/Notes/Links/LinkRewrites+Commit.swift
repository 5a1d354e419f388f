import Foundation
import RecordStore

/// How a move commits with its link rewrites when other processes commit while it plans them.
public enum LinkRewriteCommit {
    /// Tries planned and committed with other processes committing freely; most renames need
    /// one. A try's commit is refused when another process committed after its plan.
    public static let unheldAttempts = 2
    /// All tries. After ``unheldAttempts``, the rest plan and commit with other processes' commits
    /// held off (``RecordDatabase/holdingOffOtherWriters(_:)``), so that only this process's own
    /// commits can come between a plan and its commit; the last commits without the check.
    public static let attempts = 20

    /// What ``run(on:plan:commit:)`` did.
    public struct Outcome<T> {
        public var value: T
        /// How many plans were made.
        public var attempts: Int
        /// Whether the last commit went without the check (commits kept coming between the plans
        /// and their commits, even with other processes held off): a note committed meanwhile
        /// may keep a link to the old path.
        public var unchecked: Bool
    }

    /// Plans the rewrites a move needs and commits them: `plan` gets the last refused plan (nil at
    /// first) to revise (``NotesSearchIndex/linkRewrites(for:revising:)``); `commit` must pass the
    /// plan's `token` as `modify(…, unchangedSince:)`. When the commit is refused
    /// (``RecordStoreError/changedSince(_:)``), the plan is revised and tried again.
    public static func run<T>(
        on database: RecordDatabase, plan: (LinkRewrites?) throws -> LinkRewrites, commit: (LinkRewrites) throws -> T
    ) throws -> Outcome<T> {
        var earlier: LinkRewrites?
        var attempt = 0
        /// One try: nil when its commit was refused.
        func attemptOnce() throws -> Outcome<T>? {
            attempt += 1
            var rewrites = try plan(earlier)
            earlier = rewrites
            let unchecked = attempt >= attempts && rewrites.token != nil
            if unchecked { rewrites.token = nil }
            do {
                return Outcome(value: try commit(rewrites), attempts: attempt, unchecked: unchecked)
            } catch RecordStoreError.changedSince {
                return nil
            }
        }
        while attempt < unheldAttempts {
            if let done = try attemptOnce() { return done }
        }
        return try database.holdingOffOtherWriters { () throws -> Outcome<T> in
            while true {
                if let done = try attemptOnce() { return done }
            }
        }
    }
}
