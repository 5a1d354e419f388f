import Foundation

/// The type of a plain (unquoted) front-matter scalar: bool, number, date, or text (the rules are
/// in `FrontMatter`'s comment). Linear in the scalar's length.
enum FrontMatterScalar {
    static func typed(_ text: String) -> PropertyValue {
        if text.utf8.count <= 5 {
            switch text.lowercased() {
            case "", "~", "null": return .text("")
            case "true": return .bool(true)
            case "false": return .bool(false)
            default: break
            }
        }
        let bytes = Array(text.utf8)
        if isDecimal(bytes), let number = Double(text), number.isFinite { return .number(number) }
        if let date = date(bytes) { return .date(date) }
        return .text(text)
    }

    /// `[-+]?(digits(.digits?)?|.digits)([eE][-+]?digits)?`: YAML 1.2 core's decimal numbers.
    static func isDecimal(_ bytes: [UInt8]) -> Bool {
        var i = 0
        func skipDigits() -> Int {
            let start = i
            while i < bytes.count, isDigit(bytes[i]) { i += 1 }
            return i - start
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
        var digits = skipDigits()
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            i += 1
            digits += skipDigits()
        }
        guard digits > 0 else { return false }
        if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
            i += 1
            if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
            guard skipDigits() > 0 else { return false }
        }
        return i == bytes.count
    }

    /// `YYYY-MM-DD`, optionally followed by `T`, `t` or a space and `HH:MM`, `:SS`, `.fraction`,
    /// and a zone (`Z`, `z`, `±HH`, `±HHMM`, `±HH:MM`, one space allowed before it); no zone is UTC.
    static func date(_ bytes: [UInt8]) -> Date? {
        func number(_ at: Int, _ count: Int) -> Int? {
            guard at + count <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[at..<at + count] {
                guard isDigit(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        func byte(_ at: Int) -> UInt8? { at < bytes.count ? bytes[at] : nil }
        guard let year = number(0, 4), byte(4) == UInt8(ascii: "-"), let month = number(5, 2), byte(7) == UInt8(ascii: "-"),
            let day = number(8, 2), (1...12).contains(month), day >= 1, day <= daysIn(month, of: year)
        else { return nil }
        var seconds = Double(daysSince1970(year: year, month: month, day: day)) * 86_400
        var i = 10
        guard i < bytes.count else { return Date(timeIntervalSince1970: seconds) }
        guard let separator = byte(i), separator == UInt8(ascii: "T") || separator == UInt8(ascii: "t") || separator == UInt8(ascii: " "),
            let hour = number(i + 1, 2), byte(i + 3) == UInt8(ascii: ":"), let minute = number(i + 4, 2), hour < 24, minute < 60
        else { return nil }
        seconds += Double(hour * 3600 + minute * 60)
        i += 6
        if byte(i) == UInt8(ascii: ":") {
            guard let second = number(i + 1, 2), second < 60 else { return nil }
            seconds += Double(second)
            i += 3
            if byte(i) == UInt8(ascii: ".") {
                let start = i + 1
                i = start
                while let digit = byte(i), isDigit(digit) { i += 1 }
                guard i > start, let fraction = Double("0." + String(decoding: bytes[start..<i], as: UTF8.self)) else { return nil }
                seconds += fraction
            }
        }
        if byte(i) == UInt8(ascii: " ") {
            i += 1
            guard i < bytes.count else { return nil }
        }
        if let zone = byte(i) {
            if zone == UInt8(ascii: "Z") || zone == UInt8(ascii: "z") {
                i += 1
            } else if zone == UInt8(ascii: "+") || zone == UInt8(ascii: "-") {
                guard let hours = number(i + 1, 2) else { return nil }
                i += 3
                var minutes = 0
                if byte(i) == UInt8(ascii: ":") {
                    guard let written = number(i + 1, 2) else { return nil }
                    minutes = written
                    i += 3
                } else if let written = number(i, 2) {
                    minutes = written
                    i += 2
                }
                guard hours < 24, minutes < 60 else { return nil }
                let offset = Double(hours * 3600 + minutes * 60)
                seconds += zone == UInt8(ascii: "+") ? -offset : offset
            } else {
                return nil
            }
        }
        guard i == bytes.count else { return nil }
        return Date(timeIntervalSince1970: seconds)
    }

    static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private static func daysIn(_ month: Int, of year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 to a date of the proleptic Gregorian calendar (H. Hinnant's
    /// `days_from_civil`).
    private static func daysSince1970(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * ((month + 9) % 12) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
