import CPostgres
import Foundation

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

    /// `conninfo` split into the same conninfo without its password (as `keyword=value` pairs)
    /// and the password; nil when libpq cannot parse it.
    public static func splittingPassword(_ conninfo: String) -> (conninfo: String, password: String?)? {
        guard let pq = try? LibPQ.functions() else { return nil }
        var message: UnsafeMutablePointer<CChar>?
        guard let options = pq.PQconninfoParse(conninfo, &message) else {
            if let message { pq.PQfreemem(message) }
            return nil
        }
        defer { pq.PQconninfoFree(options) }
        var parts: [String] = []
        var password: String?
        var option = options
        while let keyword = option.pointee.keyword {
            if let value = option.pointee.val {
                let name = String(cString: keyword)
                if name == "password" {
                    password = String(cString: value)
                } else {
                    parts.append(name + "=" + quoted(String(cString: value)))
                }
            }
            option += 1
        }
        return (parts.joined(separator: " "), password)
    }

    /// `conninfo` with `password` added (a later keyword wins in libpq).
    public static func adding(password: String, to conninfo: String) -> String {
        conninfo + " password=" + quoted(password)
    }

    /// `message` (any text libpq or the server handed back about `conninfo`) with `conninfo`
    /// shown redacted and every password it may hold as `***`: the one libpq parses, and, for a
    /// string libpq cannot parse (which its message quotes), a URL's `user:password@` and a
    /// `password=` keyword found by hand.
    public static func scrubbed(_ message: String, conninfo: String) -> String {
        var text = message
        if !conninfo.isEmpty { text = text.replacingOccurrences(of: conninfo, with: redacted(conninfo)) }
        for secret in secrets(in: conninfo) where !secret.isEmpty {
            text = text.replacingOccurrences(of: secret, with: "***")
        }
        return text
    }

    /// The passwords `conninfo` may hold, parsed by libpq or found by hand (see ``scrubbed(_:conninfo:)``).
    static func secrets(in conninfo: String) -> [String] {
        var found: [String] = []
        if let password = splittingPassword(conninfo)?.password { found.append(password) }
        if let scheme = conninfo.range(of: "://") {
            let rest = conninfo[scheme.upperBound...]
            let authority = rest.prefix { $0 != "/" && $0 != "?" }
            if let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") {
                let password = String(authority[authority.index(after: colon)..<at])
                found.append(password)
                if let decoded = password.removingPercentEncoding { found.append(decoded) }
            }
        }
        var rest = Substring(conninfo)
        while let keyword = rest.range(of: "password") {
            rest = rest[keyword.upperBound...].drop { $0 == " " || $0 == "\t" }
            guard rest.first == "=" else { continue }
            rest = rest.dropFirst().drop { $0 == " " || $0 == "\t" }
            if rest.first == "'" {
                var value = ""
                var escaped = false
                for character in rest.dropFirst() {
                    if escaped {
                        value.append(character)
                        escaped = false
                    } else if character == "\\" {
                        escaped = true
                    } else if character == "'" {
                        break
                    } else {
                        value.append(character)
                    }
                }
                found.append(value)
            } else {
                found.append(String(rest.prefix { !$0.isWhitespace && $0 != "&" }))
            }
        }
        return found.sorted { $0.count > $1.count }
    }

    /// A conninfo value, single-quoted with `\` escapes when it is empty or holds a space, a
    /// quote or a backslash (libpq's rules).
    static func quoted(_ value: String) -> String {
        guard value.isEmpty || value.contains(where: { $0 == " " || $0 == "'" || $0 == "\\" || $0.isWhitespace }) else { return value }
        return "'" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
    }
}
