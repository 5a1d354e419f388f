import Foundation
import Postgres
import TestSupport
import Testing

@Suite(.tags(.postgres), .needsPostgres) struct ConnectionTests {
    @Test func connectsAndReportsTheServerVersion() throws {
        let connection = try Connection(try cluster().conninfo())
        #expect(connection.isOpen)
        #expect(connection.serverVersion >= 100000)
        let result = try connection.execute("SELECT current_user AS who")
        #expect(result.value(0, "who") == "postgres")
    }

    @Test func aURLConnectsToo() throws {
        let directory = try cluster().directory
        let encoded = directory.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let connection = try Connection("postgresql://postgres:\(TestCluster.password)@/postgres?host=\(encoded)")
        #expect(try connection.execute("SELECT 1 AS one").value(0, "one") == "1")
    }

    @Test func aWrongPasswordIsAnAuthenticationError() throws {
        #expect {
            try Connection(try cluster().conninfo(password: "wrong"))
        } throws: { error in
            guard let error = error as? PostgresError else { return false }
            return error.kind == .authenticationFailed && error.message.contains("password authentication failed")
        }
    }

    @Test func noServerIsAConnectionError() throws {
        let missing = "/tmp/notesfs-no-server-" + UUID().uuidString
        #expect {
            try Connection("host=\(missing) dbname=postgres user=postgres")
        } throws: { error in
            guard let error = error as? PostgresError else { return false }
            return error.kind == .connectionFailed && error.message.contains(missing)
        }
    }

    @Test func parametersArePassedAsTextNeverSpliced() throws {
        let connection = try Connection(try cluster().conninfo())
        let hostile = "Robert'); DROP TABLE students; -- ✓ \"quoted\" \\ backslash"
        let result = try connection.execute("SELECT $1::text AS a, $2::int + 1 AS b, $3::text IS NULL AS c", [hostile, "41", nil])
        #expect(result.rows.count == 1)
        #expect(result.value(0, "a") == hostile)
        #expect(result.value(0, "b") == "42")
        #expect(result.value(0, "c") == "t")
    }

    @Test func serverErrorsCarryTheirSQLState() throws {
        let connection = try Connection(try cluster().conninfo())
        #expect {
            try connection.execute("SELECT 1 / 0")
        } throws: { error in
            (error as? PostgresError).map { $0.kind == .server && $0.sqlState == "22012" && $0.message == "division by zero" } ?? false
        }
        // The connection is still usable after a failed statement.
        #expect(try connection.execute("SELECT 2 AS two").value(0, "two") == "2")
    }

    @Test func aStatementTimeoutIsReported() throws {
        let connection = try Connection(try cluster().conninfo() + " options='-c statement_timeout=50'")
        #expect {
            try connection.execute("SELECT pg_sleep(10)")
        } throws: { error in
            (error as? PostgresError).map { $0.kind == .server && $0.sqlState == "57014" } ?? false
        }
    }

    @Test func aTransactionRollsBackWhenItsBodyThrows() throws {
        let connection = try Connection(try cluster().makeDatabase())
        try connection.execute("CREATE TABLE t (v text)")
        #expect(throws: PostgresError.self) {
            try connection.transaction { () throws(PostgresError) in
                try connection.execute("INSERT INTO t VALUES ($1)", ["gone"])
                try connection.execute("INSERT INTO missing_table VALUES (1)")
            }
        }
        try connection.transaction { () throws(PostgresError) in try connection.execute("INSERT INTO t VALUES ($1)", ["kept"]) }
        #expect(try connection.execute("SELECT v FROM t").rows == [["kept"]])
    }

    @Test func aKilledBackendIsALostConnection() throws {
        let info = try cluster().conninfo()
        let victim = try Connection(info)
        let pid = try victim.execute("SELECT pg_backend_pid() AS pid").value(0, "pid")
        try Connection(info).execute("SELECT pg_terminate_backend($1::int)", [pid])
        #expect {
            try victim.execute("SELECT 1")
        } throws: { error in
            (error as? PostgresError)?.kind == .connectionLost || (error as? PostgresError)?.sqlState == "57P01"
        }
        #expect(!victim.isOpen)
    }

    @Test func notifyWakesAListener() throws {
        let info = try cluster().conninfo()
        let listener = try Connection(info)
        let channel = "notesfs test " + UUID().uuidString
        try listener.listen(channel)
        #expect(try listener.notifications(waitingUpTo: 0).isEmpty)
        try Connection(info).notify(channel, payload: "seq 42")
        let received = try listener.notifications(waitingUpTo: 30)
        #expect(received.map(\.channel) == [channel])
        #expect(received.map(\.payload) == ["seq 42"])
    }

    @Test func binaryByteaRoundTripsEveryByte() throws {
        let connection = try Connection(try cluster().conninfo())
        let bytes = (0...255).map { UInt8($0) } + [0, 0, 255]
        let back = try connection.fetchBytes("SELECT $2::bytea AS b WHERE $1 = 'x'", ["x"], sending: bytes)
        #expect(back == [bytes])
        // As the server sees them: the same length and digest as the bytes sent.
        let seen = try connection.execute("SELECT octet_length($1::bytea) AS n, md5($1::bytea) AS m", [], bytes: bytes)
        #expect(seen.value(0, "n") == String(bytes.count))
        #expect(try connection.fetchBytes("SELECT decode($1, 'hex')", ["00ff"]) == [[0, 255]])
        #expect(try connection.execute("SELECT octet_length($1::bytea) AS n", [], bytes: []).value(0, "n") == "0")
        #expect(try connection.fetchBytes("SELECT NULL::bytea", []) == [nil])
    }
}
