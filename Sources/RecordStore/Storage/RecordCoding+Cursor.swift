import Foundation

/// The fast decoder: record JSON → `Record` straight from the bytes (see ``JSONCursor``).
extension RecordCoding {
    /// A decoded record plus the index-only members (`sizes`, `seq`) of snapshot lines.
    struct Decoded {
        var record: Record
        var sizes: OmittedFields
        var seq: UInt64
    }

    static func decode(_ data: Data) throws(RecordDecodingError) -> Record {
        try decodeWithExtras(data).record
    }

    static func decodeWithExtras(_ data: Data) throws(RecordDecodingError) -> Decoded {
        do {
            return try data.withJSONCursor { (cursor) throws(JSONSyntaxError) -> Decoded in
                let decoded = try decode(&cursor)
                try cursor.expectEnd()
                return decoded
            }
        } catch {
            throw RecordDecodingError(error.description)
        }
    }

    /// Decodes one record from bytes in place (a record file read into a reused buffer).
    static func decode(_ bytes: UnsafeRawBufferPointer) throws(RecordDecodingError) -> Record {
        var cursor = JSONCursor(bytes.bindMemory(to: UInt8.self))
        do throws(JSONSyntaxError) {
            let decoded = try decode(&cursor)
            try cursor.expectEnd()
            return decoded.record
        } catch {
            throw RecordDecodingError(error.description)
        }
    }

    static func decode(_ cursor: inout JSONCursor) throws(JSONSyntaxError) -> Decoded {
        var name: String?
        var type: String?
        var tag: String?
        var identity: UInt64?
        var created: Double?
        var modified: Double?
        var seq: UInt64 = 0
        var fields: [String: FieldValue] = [:]
        var sizes = OmittedFields()
        try cursor.readObject { (c, key) throws(JSONSyntaxError) in
            switch key {
            case "recordName": name = try c.readString()
            case "recordType": type = try c.readString()
            case "recordChangeTag": tag = try c.readString()
            case "identity": identity = try c.readUInt64()
            case "creationDate": created = try c.readDouble()
            case "modificationDate": modified = try c.readDouble()
            case "seq": seq = try c.readUInt64()
            case "fields":
                try c.readObject { (c, fieldKey) throws(JSONSyntaxError) in
                    do throws(JSONSyntaxError) {
                        fields[fieldKey] = try readFieldValue(&c)
                    } catch {
                        throw JSONSyntaxError(offset: error.offset, message: "field \(fieldKey): \(error.message)")
                    }
                }
            case "sizes":
                try c.readObject { (c, sizeKey) throws(JSONSyntaxError) in sizes[sizeKey] = Int(try c.readInt64()) }
            default:
                try c.skipValue()
            }
        }
        guard let name, !name.isEmpty else { throw cursor.error("missing recordName") }
        guard let type, !type.isEmpty else { throw cursor.error("missing recordType") }
        let record = Record(
            recordID: RecordID(recordName: name), recordType: type, changeTag: tag,
            creationDate: created.map(Date.init(timeIntervalSince1970:)),
            modificationDate: modified.map(Date.init(timeIntervalSince1970:)), identity: identity, fields: fields)
        return Decoded(record: record, sizes: sizes, seq: seq)
    }

    /// `{"type": T, "value": V}`; `type` is expected first (as written), else the tree decoder is used.
    static func readFieldValue(_ c: inout JSONCursor) throws(JSONSyntaxError) -> FieldValue {
        let start = c.index
        try c.expect(UInt8(ascii: "{"))
        guard (try? c.readString()) == "type" else { return try treeFallback(&c, from: start) }
        try c.expect(UInt8(ascii: ":"))
        let type = try c.readString()
        try c.expect(UInt8(ascii: ","))
        guard try c.readString() == "value" else { return try treeFallback(&c, from: start) }
        try c.expect(UInt8(ascii: ":"))
        let value: FieldValue
        func wrong() -> JSONSyntaxError { c.error("value is not a valid \(type)") }
        switch type {
        case "string": value = .string(try c.readString())
        case "int64": value = .int64(try c.readInt64())
        case "double": value = .double(try c.readDouble())
        case "bool": value = .bool(try c.readBool())
        case "date":
            let seconds = try c.readDouble()
            guard seconds.isFinite else { throw wrong() }
            value = .date(Date(timeIntervalSince1970: seconds))
        case "reference":
            var target: String?
            var action: Reference.Action?
            try c.readObject { (c, key) throws(JSONSyntaxError) in
                switch key {
                case "recordName": target = try c.readString()
                case "action": action = Reference.Action(rawValue: try c.readString())
                default: try c.skipValue()
                }
            }
            guard let target, !target.isEmpty, let action else { throw wrong() }
            value = .reference(Reference(recordID: RecordID(recordName: target), action: action))
        case "list":
            var items: [FieldValue] = []
            try c.readArray { (c) throws(JSONSyntaxError) in items.append(try readFieldValue(&c)) }
            value = .list(items)
        default:
            // bytes, asset and anything irregular: the tree decoder checks them.
            let json = try c.parseTreeValue()
            do {
                value = try decodeValue(.object([JSONMember(key: "type", value: .string(type)), JSONMember(key: "value", value: json)]))
            } catch {
                throw c.error(error.description)
            }
        }
        try c.expect(UInt8(ascii: "}"))
        return value
    }

    private static func treeFallback(_ c: inout JSONCursor, from start: Int) throws(JSONSyntaxError) -> FieldValue {
        c.index = start
        let json = try c.parseTreeValue()
        do { return try decodeValue(json) } catch { throw c.error(error.description) }
    }
}
