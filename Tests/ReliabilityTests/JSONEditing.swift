import Contract

extension JSONValue {
    /// A copy with the member at `path` (dot-separated object keys; integers index arrays) set to
    /// `value`, or removed when `nil`.
    func setting(_ path: String, _ value: JSONValue?) -> JSONValue {
        Self.set(self, path.split(separator: ".").map(String.init)[...], value)
    }

    private static func set(_ node: JSONValue, _ path: ArraySlice<String>, _ value: JSONValue?) -> JSONValue {
        guard let head = path.first else { return value ?? .null }
        let rest = path.dropFirst()
        switch node {
        case .array(var elements):
            guard let index = Int(head), elements.indices.contains(index) else { return node }
            if rest.isEmpty, value == nil { elements.remove(at: index) } else { elements[index] = set(elements[index], rest, value) }
            return .array(elements)
        case .object(var members):
            if rest.isEmpty { members[head] = value } else { members[head] = set(members[head] ?? .object([:]), rest, value) }
            return .object(members)
        default:
            return node
        }
    }

    /// Parses bytes the test produced itself (crashes the test on bad input, which is a test bug).
    static func parsed(_ bytes: [UInt8]) -> JSONValue {
        // A request made by RequestFactory always parses.
        (try? JSONParser(maxDepth: 64, maxBytes: 1 << 20).parse(bytes)) ?? .null
    }

    /// The document as bytes.
    var bytes: [UInt8] { JSONWriter.encode(self) }
}
