import Contract

/// Reads fields of a JSON request body (or of a nested object) with issuer-style error messages.
struct BodyReader: Sendable {
    let members: [String: JSONValue]
    /// Prefix for field paths (`instruction.` inside Worldpay's instruction).
    let path: String

    private static let parser = JSONParser(maxDepth: 16, maxBytes: 1 << 20)

    /// Parses `body`, which must be a JSON object.
    init(body: [UInt8]) throws(FieldProblem) {
        guard let document = try? Self.parser.parse(body), case .object(let members) = document else {
            throw FieldProblem(field: "body", message: "the request body must be a JSON object")
        }
        self.members = members
        path = ""
    }

    init(members: [String: JSONValue], path: String) {
        self.members = members
        self.path = path
    }

    /// The body's fields, or nil when it is not a JSON object. Each request body is parsed once:
    /// the call log reads what it can from this, and validation calls `required(_:)` on it.
    static func lenient(_ body: [UInt8]) -> BodyReader? {
        try? BodyReader(body: body)
    }

    /// The parsed body, or the "must be a JSON object" problem.
    static func required(_ parsed: BodyReader?) throws(FieldProblem) -> BodyReader {
        guard let parsed else { throw FieldProblem(field: "body", message: "the request body must be a JSON object") }
        return parsed
    }

    func field(_ name: String) -> String { path + name }

    subscript(name: String) -> JSONValue? { members[name] }

    /// The value of `name`, or the "is required" problem when it is absent or null.
    private func present(_ name: String) throws(FieldProblem) -> JSONValue {
        guard let value = members[name], !value.isNull else { throw problem(name, "is required") }
        return value
    }

    /// The problem with `name`: `<field> <what>`.
    private func problem(_ name: String, _ what: String) -> FieldProblem {
        FieldProblem(field: field(name), message: "\(field(name)) \(what)")
    }

    /// A string field that must be present and non-blank (unless `allowBlank`).
    func requiredString(_ name: String) throws(FieldProblem) -> String {
        let value = try present(name)
        guard let text = value.stringValue else { throw problem(name, "must be a string") }
        guard !text.allSatisfy(\.isWhitespace) else { throw problem(name, "must not be blank") }
        return text
    }

    /// A string field that may be absent or null; blank counts as given.
    func optionalString(_ name: String) throws(FieldProblem) -> String? {
        guard let value = members[name], !value.isNull else { return nil }
        guard let text = value.stringValue else { throw problem(name, "must be a string") }
        return text
    }

    /// A Boolean field that may be absent or null.
    func optionalBool(_ name: String) throws(FieldProblem) -> Bool? {
        guard let value = members[name], !value.isNull else { return nil }
        guard let flag = value.boolValue else { throw problem(name, "must be true or false") }
        return flag
    }

    /// An integer field that must be present.
    func requiredInteger(_ name: String) throws(FieldProblem) -> Int64 {
        let value = try present(name)
        guard let number = value.int64Value else { throw problem(name, "must be an integer") }
        return number
    }

    /// A nested object that must be present.
    func requiredObject(_ name: String) throws(FieldProblem) -> BodyReader {
        let value = try present(name)
        guard case .object(let nested) = value else { throw problem(name, "must be an object") }
        return BodyReader(members: nested, path: field(name) + ".")
    }

    /// A nested object that may be absent or null.
    func optionalObject(_ name: String) throws(FieldProblem) -> BodyReader? {
        guard let value = members[name], !value.isNull else { return nil }
        return try requiredObject(name)
    }

    /// An array of strings that must be present.
    func requiredStringArray(_ name: String) throws(FieldProblem) -> [String] {
        let value = try present(name)
        guard let elements = value.arrayValue else { throw problem(name, "must be an array of strings") }
        var strings: [String] = []
        for (index, element) in elements.enumerated() {
            guard let text = element.stringValue else {
                throw FieldProblem(field: "\(field(name))[\(index)]", message: "\(field(name))[\(index)] must be a string")
            }
            strings.append(text)
        }
        return strings
    }
}
