import Contract

/// Renders a dead letter's value for an operator with every field outside a short allow-list
/// replaced by `<redacted>`: request facts stay readable, secrets and raw identifiers never show.
public enum DeadLetterRedactor {
    /// Field paths shown as they are.
    public static let visiblePaths: Set<String> = [
        "version", "request_id", "program", "kind", "wallet", "started_at", "deadline", "card.last4",
        "apple.device_type", "apple.app_version", "apple.product_type", "google.google_opc_requested",
        "payment.transaction_reference", "payment.amount.currency", "payment.amount.value", "payment.narrative",
        "payment.auto_settle", "payment_action.action", "payment_action.transaction_reference",
        "payment_action.amount.currency", "payment_action.amount.value",
        "issuer", "attempt", "due_at", "window_start", "first_indeterminate_at",
    ]

    /// A redacted JSON rendering of `value`, or a one-line description when it is not JSON.
    public static func render(_ value: [UInt8]?) -> String {
        guard let value else { return "(no value)" }
        guard let document = try? JSONParser(maxDepth: 64, maxBytes: 1 << 20).parse(value) else {
            return "(\(value.count) bytes, not JSON: not shown)"
        }
        return String(decoding: JSONWriter.encode(redact(document, path: "")), as: UTF8.self)
    }

    static func redact(_ value: JSONValue, path: String) -> JSONValue {
        switch value {
        case .object(let members):
            var result: [String: JSONValue] = [:]
            for (key, member) in members {
                let childPath = path.isEmpty ? key : "\(path).\(key)"
                result[AuditEvent.safeIdentifier(key)] = redact(member, path: childPath)
            }
            return .object(result)
        case .array(let items):
            return .array(items.map { redact($0, path: path) })
        case .null:
            return .null
        default:
            return visiblePaths.contains(path) ? value : .string(Sensitive.placeholder)
        }
    }
}
