import Foundation
import SQLite
import Testing

/// Process-wide SQLite settings the connections rely on.
@Suite struct SQLiteSettingsTests {
    /// SQLite's allocation counters are off once a connection has opened: with them on (SQLite's
    /// default), every `sqlite3_malloc` and `sqlite3_free` of every thread took one process-wide
    /// mutex, and the counter would hold the thousands of bytes the rows below need.
    @Test func allocationsAreNotCounted() throws {
        let connection = try SQLiteConnection(path: ":memory:", create: true)
        try connection.execute("CREATE TABLE t(x TEXT)")
        let insert = try connection.prepare("INSERT INTO t(x) VALUES (?1)")
        for i in 0..<1_000 { try insert.run([.text(String(repeating: "row \(i) ", count: 20))]) }
        let rows = try connection.prepare("SELECT count(*) FROM t").rows { $0.int(0) }
        #expect(rows == [1_000])
        #expect(SQLiteConnection.countedMemory == 0)
    }
}
