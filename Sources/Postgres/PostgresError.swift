/// A failure talking to PostgreSQL: what kind, the server's (or libpq's) message and SQLSTATE.
public struct PostgresError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable, Equatable {
        /// The server could not be reached or refused the connection (libpq's message says why).
        case connectionFailed
        /// The server rejected the password or wanted one that was not given.
        case authenticationFailed
        /// A connection that worked broke (server stopped, network gone).
        case connectionLost
        /// The server ran the statement and reported an error (see ``sqlState``).
        case server
        /// The client side could not make sense of something (a bad conninfo, an unexpected result).
        case client
    }

    public var kind: Kind
    /// The server's primary message, or libpq's message when the server sent none.
    public var message: String
    /// The five-character SQLSTATE (`23505`, `57014`, `28P01`) when the server sent one.
    public var sqlState: String?
    /// The server's DETAIL line, if any.
    public var detail: String?

    public init(_ kind: Kind, _ message: String, sqlState: String? = nil, detail: String? = nil) {
        self.kind = kind
        self.message = message
        self.sqlState = sqlState
        self.detail = detail
    }

    public var description: String {
        var text = message
        if let sqlState { text += " (SQLSTATE \(sqlState))" }
        if let detail { text += ": " + detail }
        return text
    }

    /// SQLSTATE 40001 or 40P01: the transaction lost a race and may simply be retried.
    public var isRetryable: Bool { sqlState == "40001" || sqlState == "40P01" }
}

extension String {
    /// libpq's messages end in a newline and may span lines ("connection to server ... failed: ...").
    var trimmedMessage: String {
        split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.joined(separator: "; ")
    }
}
