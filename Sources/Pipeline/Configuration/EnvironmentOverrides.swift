import Contract
import Foundation

/// Applies `PROVISIONER_…` environment variables over a configuration document.
///
/// The variable name after `PROVISIONER_` is a key path with `__` between levels:
/// `PROVISIONER_GROUP_ID`, `PROVISIONER_HTTP__LISTEN`, `PROVISIONER_PROGRAMS__DEMO_IMPRINT__BASE_URL`,
/// `PROVISIONER_KAFKA__BOOTSTRAP_SERVERS`. A level matches an existing key ignoring case, with `-`
/// and `.` read as `_`; under `kafka`, `kafka_consumer` and `kafka_producer` an unmatched name becomes
/// a librdkafka property (lowercase, `_` → `.`). The value is parsed as JSON when it is a number,
/// `true`/`false`, `null`, an object or an array, else taken as a string.
/// `PROVISIONER_AUDIT_KEY` and other variables a configuration names as secrets are not overrides.
public enum EnvironmentOverrides {
    static let prefix = "PROVISIONER_"

    /// Returns `document` with every override applied; unusable overrides become issues.
    public static func apply(_ environment: [String: String], to document: JSONValue, issues: inout [ConfigurationIssue]) -> JSONValue {
        var result = document
        let secretNames = referencedVariableNames(in: document).union(["PROVISIONER_AUDIT_KEY"])
        for (name, value) in environment.sorted(by: { $0.key < $1.key }) where name.hasPrefix(prefix) && !secretNames.contains(name) {
            let path = name.dropFirst(prefix.count).components(separatedBy: "__").filter { !$0.isEmpty }
            guard !path.isEmpty else { continue }
            if let updated = set(parse(value), raw: value, at: path[...], in: result, parents: []) {
                result = updated
            } else {
                issues.append(.init(.warning, "environment \(name)", "matches no configuration key; ignored"))
            }
        }
        return result
    }

    private static func parse(_ text: String) -> JSONValue {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if let first = trimmed.first, "{[-0123456789tfn".contains(first), let value = try? JSONParser().parse(trimmed) {
            return value
        }
        return .string(text)
    }

    private static func normalize(_ key: String) -> String {
        String(key.uppercased().map { $0 == "-" || $0 == "." ? "_" : $0 })
    }

    private static let propertyMaps: Set<String> = ["kafka", "kafka_consumer", "kafka_producer"]
    private static let knownTopLevelKeys: Set<String> = [
        "group_id", "worker_id", "kafka", "kafka_secret_env", "kafka_secret_file", "kafka_consumer", "kafka_producer", "topics", "programs", "results",
        "audit", "http", "deadlines", "scheduler", "breaker", "reconcile", "nonce_guard", "duplicates", "shutdown", "rebalance", "publish", "log",
        "dlq", "secrets", "tracing",
    ]

    /// Top-level keys whose values are always text, whatever the override looks like.
    private static let textKeys: Set<String> = ["group_id", "worker_id"]

    private static func set(_ value: JSONValue, raw: String, at path: ArraySlice<String>, in node: JSONValue, parents: [String]) -> JSONValue? {
        guard let head = path.first else {
            // A value that is text in the document (or a text key) stays text: PROVISIONER_GROUP_ID=2024.
            if node.stringValue != nil || (parents.count == 1 && textKeys.contains(parents[0])) { return .string(raw) }
            return value
        }
        var members = node.objectValue ?? [:]
        let existing = members.keys.first { normalize($0) == normalize(head) }
        let key: String
        if let existing {
            key = existing
        } else if parents.count == 1 && propertyMaps.contains(parents[0]) {
            key = head.lowercased().replacingOccurrences(of: "_", with: ".")
        } else if parents.isEmpty, let known = knownTopLevelKeys.first(where: { normalize($0) == normalize(head) }) {
            key = known
        } else if path.count == 1 && !parents.isEmpty {
            key = head.lowercased()
        } else {
            return nil
        }
        guard let child = set(value, raw: raw, at: path.dropFirst(), in: members[key] ?? .null, parents: parents + [key]) else { return nil }
        members[key] = child
        return .object(members)
    }

    /// Every `…_env` value in the document: those variables hold secrets, not overrides.
    private static func referencedVariableNames(in node: JSONValue) -> Set<String> {
        switch node {
        case .object(let members):
            var names: Set<String> = []
            for (key, value) in members {
                if key.hasSuffix("_env"), let name = value.stringValue { names.insert(name) }
                if key.hasSuffix("_env"), let map = value.objectValue { names.formUnion(map.values.compactMap(\.stringValue)) }
                names.formUnion(referencedVariableNames(in: value))
            }
            return names
        case .array(let items):
            return items.reduce(into: Set<String>()) { $0.formUnion(referencedVariableNames(in: $1)) }
        default:
            return []
        }
    }
}
