import Contract

extension JSONValue {
    /// The value at a dotted `path` of object keys (`spec.template.spec`); numbers index arrays.
    /// Keys holding dots cannot be reached this way: use the subscript for those.
    func at(_ path: String) -> JSONValue? {
        var node: JSONValue? = self
        for part in path.split(separator: ".").map(String.init) {
            if let index = Int(part), let items = node?.arrayValue {
                node = items.indices.contains(index) ? items[index] : nil
            } else {
                node = node?[part]
            }
        }
        return node
    }

    /// Scalars as text (YAML numbers and Booleans compared with Kafka's string configs).
    var scalarText: String? {
        switch self {
        case .string(let text): text
        case .number(let number): number.literal
        case .bool(let flag): flag ? "true" : "false"
        default: nil
        }
    }
}
