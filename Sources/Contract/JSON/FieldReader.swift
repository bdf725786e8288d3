/// Reads typed members of one JSON object and names them by path in errors.
///
/// JSON `null` counts as absent. Types are exact: a number where a string is expected is an error.
struct FieldReader {
    let members: [String: JSONValue]
    let path: String

    init(_ members: [String: JSONValue], path: String = "") {
        self.members = members
        self.path = path
    }

    func fieldPath(_ key: String) -> String {
        path.isEmpty ? key : path + "." + key
    }

    func value(_ key: String) -> JSONValue? {
        guard let value = members[key], !value.isNull else { return nil }
        return value
    }

    func string(_ key: String) throws(FieldError) -> String? {
        guard let value = value(key) else { return nil }
        guard case .string(let text) = value else { throw .wrongType(fieldPath(key), "string", actual: value) }
        return text
    }

    func requiredString(_ key: String) throws(FieldError) -> String {
        guard let text = try string(key) else { throw .missing(fieldPath(key), "string") }
        return text
    }

    func bool(_ key: String) throws(FieldError) -> Bool? {
        guard let value = value(key) else { return nil }
        guard case .bool(let flag) = value else { throw .wrongType(fieldPath(key), "boolean", actual: value) }
        return flag
    }

    func integer(_ key: String) throws(FieldError) -> Int64? {
        guard let value = value(key) else { return nil }
        guard case .number(let number) = value else { throw .wrongType(fieldPath(key), "integer", actual: value) }
        guard let integer = number.int64Value else {
            throw .invalid(fieldPath(key), "must be an integer without fraction or exponent, within 64 bits")
        }
        return integer
    }

    func requiredInteger(_ key: String) throws(FieldError) -> Int64 {
        guard let integer = try integer(key) else { throw .missing(fieldPath(key), "integer") }
        return integer
    }

    func object(_ key: String) throws(FieldError) -> FieldReader? {
        guard let value = value(key) else { return nil }
        guard case .object(let members) = value else { throw .wrongType(fieldPath(key), "object", actual: value) }
        return FieldReader(members, path: fieldPath(key))
    }

    func requiredObject(_ key: String) throws(FieldError) -> FieldReader {
        guard let reader = try object(key) else { throw .missing(fieldPath(key), "object") }
        return reader
    }

    func requiredStringArray(_ key: String) throws(FieldError) -> [String] {
        guard let value = value(key) else { throw .missing(fieldPath(key), "array of strings") }
        guard case .array(let elements) = value else { throw .wrongType(fieldPath(key), "array of strings", actual: value) }
        var strings: [String] = []
        strings.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            guard case .string(let text) = element else {
                throw .wrongType("\(fieldPath(key))[\(index)]", "string", actual: element)
            }
            strings.append(text)
        }
        return strings
    }

    func timestamp(_ key: String) throws(FieldError) -> Int64? {
        guard let text = try string(key) else { return nil }
        guard let milliseconds = RFC3339.parse(text) else {
            throw .invalid(fieldPath(key), "must be an RFC 3339 timestamp with Z or an offset, e.g. 2026-11-29T10:00:00.000Z")
        }
        return milliseconds
    }
}

extension FieldReader {
    /// Parses `bytes` as one JSON object and decodes it with `decode`, turning every failure into a
    /// `ContractDecodingError` (`what` is the message when the document is not an object).
    static func decodeObject<T>(_ bytes: [UInt8], what: String,
                                _ decode: (FieldReader) throws(FieldError) -> T) throws(ContractDecodingError) -> T {
        let document: JSONValue
        do {
            document = try JSONParser().parse(bytes)
        } catch {
            throw ContractDecodingError(field: "", message: "not JSON: \(error.description)")
        }
        guard case .object(let members) = document else {
            throw ContractDecodingError(field: "", message: what)
        }
        do throws(FieldError) {
            return try decode(FieldReader(members))
        } catch {
            throw ContractDecodingError(error)
        }
    }
}
