import Synchronization

/// The values of secret Kafka properties (`KafkaConfiguration.isSecret`) this process configured,
/// taken out of every text librdkafka hands back: log lines, error callbacks, error strings. They
/// can quote a secret: an invalid `sasl.oauthbearer.config` is echoed from the pair that failed to
/// parse ("Unrecognized sasl.oauthbearer.config beginning at: …").
///
/// Registered when a configuration is built (`KafkaConfiguration.make`); a value is removed whole,
/// and so is each of its space-separated parts and each part's value after `=` of 4 bytes or more
/// (the forms librdkafka quotes). Shorter fragments are left: they cannot carry a secret, and
/// removing them would blank ordinary words out of every log line.
enum KafkaSecretRedaction {
    /// What replaces a secret.
    static let placeholder = "<redacted>"
    /// The shortest fragment removed, in bytes.
    static let minimumFragmentBytes = 4

    private static let fragments = Mutex<[String]>([])

    /// Remembers the values of the secret properties among `properties`.
    static func register(_ properties: [String: String]) {
        let found = properties.filter { KafkaConfiguration.isSecret($0.key) }.values.flatMap(Self.fragments(of:))
        guard !found.isEmpty else { return }
        fragments.withLock { known in
            // Longest first, so a value is removed before a part of it could leave the rest behind.
            known = Array(Set(known).union(found)).sorted { ($0.utf8.count, $0) > ($1.utf8.count, $1) }
        }
    }

    /// `text` without any registered secret.
    static func redact(_ text: String) -> String {
        let known = fragments.withLock { $0 }
        return known.reduce(text) { text, fragment in
            text.contains(fragment) ? text.replacingOccurrences(of: fragment, with: placeholder) : text
        }
    }

    /// A secret value and the parts of it librdkafka may quote.
    static func fragments(of value: String) -> [String] {
        var found = [value]
        for part in value.split(whereSeparator: \.isWhitespace).map(String.init) {
            found.append(part)
            if let equals = part.firstIndex(of: "=") { found.append(String(part[part.index(after: equals)...])) }
        }
        return found.filter { $0.utf8.count >= minimumFragmentBytes }
    }
}
