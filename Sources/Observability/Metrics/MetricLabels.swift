/// Label pairs of one metric series, kept sorted by name so equal sets compare equal.
///
/// Label values must be bounded, non-secret words (program, wallet, status, code, endpoint):
/// never a raw identifier. The leak canary tests scrape `/metrics` to hold this.
public struct MetricLabels: Sendable, Hashable, ExpressibleByDictionaryLiteral {
    /// Sorted (name, value) pairs.
    public let pairs: [Pair]

    /// One label.
    public struct Pair: Sendable, Hashable {
        /// Label name.
        public let name: String
        /// Label value.
        public let value: String
    }

    /// Creates labels from a dictionary.
    public init(_ labels: [String: String]) {
        pairs = labels.map { Pair(name: $0.key, value: $0.value) }.sorted { $0.name < $1.name }
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }

    /// No labels.
    public static let none = MetricLabels([:])

    /// `{a="1",b="2"}` in Prometheus text format, or empty; `extra` is appended last (`le` for buckets).
    func rendered(extra: Pair? = nil) -> String {
        let all = extra.map { pairs + [$0] } ?? pairs
        guard !all.isEmpty else { return "" }
        var text = "{"
        for (index, pair) in all.enumerated() {
            if index > 0 { text += "," }
            text += pair.name + "=\""
            for character in pair.value {
                switch character {
                case "\\": text += "\\\\"
                case "\"": text += "\\\""
                case "\n": text += "\\n"
                default: text.append(character)
                }
            }
            text += "\""
        }
        return text + "}"
    }
}
