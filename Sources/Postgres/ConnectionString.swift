import CPostgres

/// A libpq conninfo string or URL as something safe to print.
public enum ConnectionString {
    /// `conninfo` without its password, in any form libpq accepts (`password=`, quoted with
    /// escapes, `user:secret@` in a URL, `?password=` in a URL's query): libpq parses it
    /// (`PQconninfoParse`) and the options it holds are written back as `keyword=value` pairs,
    /// the password as `***`. A string libpq cannot parse is not shown at all, nor is any when
    /// libpq cannot be loaded (``LibPQ``).
    public static func redacted(_ conninfo: String) -> String {
        guard let pq = try? LibPQ.functions() else { return "(a server string: libpq cannot be loaded to parse it)" }
        var message: UnsafeMutablePointer<CChar>?
        guard let options = pq.PQconninfoParse(conninfo, &message) else {
            if let message { pq.PQfreemem(message) }
            return "(a server string libpq cannot parse)"
        }
        defer { pq.PQconninfoFree(options) }
        var parts: [String] = []
        var option = options
        while let keyword = option.pointee.keyword {
            if let value = option.pointee.val {
                let name = String(cString: keyword)
                parts.append(name + "=" + (name == "password" ? "***" : quoted(String(cString: value))))
            }
            option += 1
        }
        return parts.joined(separator: " ")
    }

    /// A conninfo value, single-quoted with `\` escapes when it is empty or holds a space, a
    /// quote or a backslash (libpq's rules).
    static func quoted(_ value: String) -> String {
        guard value.isEmpty || value.contains(where: { $0 == " " || $0 == "'" || $0 == "\\" || $0.isWhitespace }) else { return value }
        return "'" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
    }
}
