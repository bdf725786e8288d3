import Contract

/// Editing parsed documents in tests: a valid request, result or config with one member changed.
extension JSONValue {
    /// A copy with the member at `path` (dot-separated object keys, created when missing; integers
    /// index arrays) set to `value`, or removed when `nil`.
    public func setting(_ path: String, _ value: JSONValue?) -> JSONValue {
        let parts = path.split(separator: ".").map(String.init)
        return Self.set(self, parts[...], value)
    }

    /// A copy without the member at `path`.
    public func removing(_ path: String) -> JSONValue {
        setting(path, nil)
    }

    private static func set(_ node: JSONValue, _ path: ArraySlice<String>, _ value: JSONValue?) -> JSONValue {
        guard let head = path.first else { return value ?? .null }
        let rest = path.dropFirst()
        switch node {
        case .array(var elements):
            guard let index = Int(head), elements.indices.contains(index) else { return node }
            if rest.isEmpty, value == nil {
                elements.remove(at: index)
            } else {
                elements[index] = set(elements[index], rest, value)
            }
            return .array(elements)
        case .object(var members):
            if rest.isEmpty {
                members[head] = value
            } else {
                members[head] = set(members[head] ?? .object([:]), rest, value)
            }
            return .object(members)
        default:
            return node
        }
    }
}
