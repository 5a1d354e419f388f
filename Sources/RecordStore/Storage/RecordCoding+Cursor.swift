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
        var fields: [String: FieldValue] = [:]
        let parts = try decodeParts(&cursor) { key, value in fields[key] = value }
        return Decoded(record: parts.record(fields: fields), sizes: parts.sizes, seq: parts.seq ?? 0)
    }

    /// An index snapshot line straight into the index's compact form (no fields dictionary made
    /// and converted: a million of them at an open).
    static func decodeMetadata(_ line: Data) throws(RecordDecodingError) -> RecordMetadata {
        do {
            return try line.withJSONCursor { (cursor) throws(JSONSyntaxError) -> RecordMetadata in
                // The fields as they come, then copied into an array of their exact size.
                var fields: [RecordMetadata.SmallField] = []
                let parts = try decodeParts(&cursor) { key, value in fields.append(RecordMetadata.SmallField(key: key, value: value)) }
                try cursor.expectEnd()
                return RecordMetadata(record: parts.record(fields: [:]), sizes: parts.sizes, smallFields: fields, seq: parts.seq ?? 0)
            }
        } catch {
            throw RecordDecodingError(error.description)
        }
    }

    /// The fields `keys` (a record's large fields, which the index leaves out) of a record file's
    /// bytes, when the file holds the very version of the record `metadata` describes: the same
    /// name, type and change tag (a tag names the commit that saved the record, and a commit saves
    /// it once). Everything else in the file, what the index holds already, is stepped over
    /// (``JSONCursor/skipValue()``, checked but not decoded). Nil when the file holds another
    /// version, lacks a key or is damaged: the caller then decodes it whole, which says why.
    static func decodeFields(_ keys: [String], of metadata: RecordMetadata, from bytes: UnsafeRawBufferPointer) -> [String: FieldValue]? {
        guard let tag = metadata.recordChangeTag else { return nil }
        var cursor = JSONCursor(bytes.bindMemory(to: UInt8.self))
        var fields = [String: FieldValue](minimumCapacity: keys.count)
        var (sameName, sameType, sameTag) = (false, false, false)
        do throws(JSONSyntaxError) {
            try cursor.readObjectKeys { (c, key) throws(JSONSyntaxError) in
                switch key {
                case "recordName": sameName = try c.readKey().equals(metadata.recordID.recordName)
                case "recordType": sameType = try c.readKey().equals(metadata.recordType)
                case "recordChangeTag": sameTag = try c.readKey().equals(tag)
                case "fields":
                    try c.readObjectKeys { (c, fieldKey) throws(JSONSyntaxError) in
                        if let key = keys.first(where: { fieldKey.equals($0) }) {
                            fields[key] = try readFieldValue(&c)
                        } else {
                            try c.skipValue()
                        }
                    }
                default:
                    try c.skipValue()
                }
            }
            try cursor.expectEnd()
        } catch {
            return nil
        }
        guard sameName, sameType, sameTag, fields.count == keys.count else { return nil }
        return fields
    }

    /// Reads one record's JSON: its fields are handed to `field` in the order they come (a key
    /// given twice, twice), the rest is returned. Keys are compared in place (``JSONKey``).
    static func decodeParts(_ cursor: inout JSONCursor, field: (String, FieldValue) -> Void) throws(JSONSyntaxError) -> SystemFields {
        var name: String?
        var type: String?
        var tag: String?
        var identity: UInt64?
        var created: Double?
        var modified: Double?
        var seq: UInt64?
        var sizes = OmittedFields()
        try cursor.readObjectKeys { (c, key) throws(JSONSyntaxError) in
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
                        field(fieldKey, try readFieldValue(&c))
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
        for seconds in [created, modified].compactMap({ $0 }) {
            if let problem = FieldValue.dateProblem(seconds) { throw cursor.error(problem) }
        }
        return SystemFields(
            name: name, type: type, tag: tag, identity: identity, created: created, modified: modified, seq: seq, sizes: sizes)
    }

    /// `{"type": T, "value": V}`; `type` is expected first (as written), else the tree decoder is used.
    /// `depth` is how deep in lists this value stands (1 for a field's value): a list deeper than
    /// ``FieldValue/maximumListDepth`` is refused before it is read, so no input recurses without bound.
    static func readFieldValue(_ c: inout JSONCursor, depth: Int = 1) throws(JSONSyntaxError) -> FieldValue {
        let start = c.index
        try c.expect(UInt8(ascii: "{"))
        guard let typeKey = try? c.readKey(), typeKey == "type" else { return try treeFallback(&c, from: start, depth: depth) }
        try c.expect(UInt8(ascii: ":"))
        let type = try c.readKey()
        try c.expect(UInt8(ascii: ","))
        guard try c.readKey() == "value" else { return try treeFallback(&c, from: start, depth: depth) }
        try c.expect(UInt8(ascii: ":"))
        let value: FieldValue
        func wrong() -> JSONSyntaxError { c.error("value is not a valid \(type.string)") }
        switch type {
        case "string": value = .string(try c.readString())
        case "int64": value = .int64(try c.readInt64())
        case "double": value = .double(try c.readDouble())
        case "bool": value = .bool(try c.readBool())
        case "date":
            let seconds = try c.readDouble()
            if let problem = FieldValue.dateProblem(seconds) { throw c.error(problem) }
            value = .date(Date(timeIntervalSince1970: seconds))
        case "reference":
            var target: String?
            var action: Reference.Action?
            try c.readObjectKeys { (c, key) throws(JSONSyntaxError) in
                switch key {
                case "recordName": target = try c.readString()
                case "action": action = Reference.Action(rawValue: try c.readString())
                default: try c.skipValue()
                }
            }
            guard let target, !target.isEmpty, let action else { throw wrong() }
            value = .reference(Reference(recordID: RecordID(recordName: target), action: action))
        case "list":
            guard depth <= FieldValue.maximumListDepth else { throw c.error("lists nested deeper than \(FieldValue.maximumListDepth)") }
            var items: [FieldValue] = []
            try c.readArray { (c) throws(JSONSyntaxError) in items.append(try readFieldValue(&c, depth: depth + 1)) }
            value = .list(items)
        default:
            // bytes, asset and anything irregular: the tree decoder checks them.
            let json = try c.parseTreeValue()
            do {
                value = try decodeValue(
                    .object([JSONMember(key: "type", value: .string(type.string)), JSONMember(key: "value", value: json)]), depth: depth)
            } catch {
                throw c.error(error.description)
            }
        }
        try c.expect(UInt8(ascii: "}"))
        return value
    }

    private static func treeFallback(_ c: inout JSONCursor, from start: Int, depth: Int) throws(JSONSyntaxError) -> FieldValue {
        c.index = start
        let json = try c.parseTreeValue()
        do { return try decodeValue(json, depth: depth) } catch { throw c.error(error.description) }
    }
}
