import Contract

/// One of a program's request-signing keys (or of the replay keys, `dlq.replay_keys`, or the audit
/// pseudonym keys, `audit.pseudonym_keys`: the same shape), named by where its secret comes from:
/// `request_signing.secret_env` / `secret_file` (the unnamed key: messages carry no
/// `x-request-key-id`) or an entry of `request_signing.keys` (`id`, `secret_env` or `secret_file`,
/// `not_after`). A program accepts every key it
/// lists until that key's `not_after`, so producers move from one key to the next during an
/// overlap the operator sets, without an outage.
public struct RequestSigningKey: Sendable, Equatable {
    /// The id messages name in `x-request-key-id`; nil for the unnamed key.
    public var id: String?
    /// Where the secret comes from: an environment variable or a file (reloaded on change).
    public var secret: SecretSource
    /// When the key retires (epoch ms): messages it signs are refused from then on; nil: never.
    public var notAfterMs: Int64?
    /// Where it is configured, for issues (`programs.P.request_signing.keys[1].secret_file`).
    public var keyPath: String

    /// Creates a key entry.
    public init(id: String?, secret: SecretSource, notAfterMs: Int64? = nil, keyPath: String) {
        self.id = id
        self.secret = secret
        self.notAfterMs = notAfterMs
        self.keyPath = keyPath
    }

    /// Whether `id` may name a key: 1-64 of `[A-Za-z0-9._-]` (it travels in a header and appears in
    /// dead-letter reasons and `config check`).
    public static func isValidID(_ id: String) -> Bool {
        (1...64).contains(id.utf8.count) && id.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x2E || byte == 0x5F || byte == 0x2D
        }
    }

    /// How the key is named in messages about it.
    public var label: String { id.map { "'\($0)'" } ?? "(unnamed, secret\(secret.keySuffix))" }
}

extension ProgramConfiguration {
    /// Every request-signing key of the program: the unnamed one first, then `request_signing.keys`.
    public var signingKeys: [RequestSigningKey] {
        let unnamed = requestSigningSecret.map {
            RequestSigningKey(id: nil, secret: $0, keyPath: "programs.\(name).request_signing.secret" + $0.keySuffix)
        }
        return (unnamed.map { [$0] } ?? []) + requestSigningKeys
    }

    /// Whether the program requires signed requests.
    public var signsRequests: Bool { !signingKeys.isEmpty }
}

extension WorkerConfiguration {
    /// How long before a key's `not_after` `config check` starts warning: 7 days.
    public static let keyRetirementNoticeMs: Int64 = 7 * 86_400_000

    /// Warnings for request-signing keys retired at `nowMs` or retiring within `noticeMs`, and for a
    /// program whose every key has retired (it refuses every request): what `config check` reports.
    public func signingKeyRetirements(nowMs: Int64, noticeMs: Int64 = keyRetirementNoticeMs) -> [ConfigurationIssue] {
        var issues: [ConfigurationIssue] = []
        for (name, program) in programs.sorted(by: { $0.key < $1.key }) where program.signsRequests {
            issues += Self.retirements(program.signingKeys, nowMs: nowMs, noticeMs: noticeMs,
                                       retired: "messages it signs are refused",
                                       retiring: "every producer must sign with another key of program \(name) by then")
            if program.signingKeys.allSatisfy({ ($0.notAfterMs ?? .max) <= nowMs }) {
                issues.append(.init(.warning, "programs.\(name).request_signing", "every key has retired: every request of program \(name) is refused"))
            }
        }
        return issues
    }

    /// A warning for each of `keys` retired at `nowMs` (`retired` says what that means) or retiring
    /// within `noticeMs` (`retiring` says what must happen first).
    static func retirements(_ keys: [RequestSigningKey], nowMs: Int64, noticeMs: Int64, retired: String, retiring: String) -> [ConfigurationIssue] {
        keys.compactMap { key in
            guard let notAfter = key.notAfterMs else { return nil }
            let at = RFC3339.format(milliseconds: notAfter)
            if notAfter <= nowMs {
                return .init(.warning, key.keyPath, "key \(key.label) retired at \(at): \(retired); remove it")
            }
            guard notAfter - nowMs <= noticeMs else { return nil }
            let hours = (notAfter - nowMs + 3_599_999) / 3_600_000
            return .init(.warning, key.keyPath, "key \(key.label) retires at \(at) (in \(hours) h): \(retiring)")
        }
    }
}

extension WorkerConfiguration {
    /// `request_signing.keys` (or `dlq.replay_keys`, `audit.pseudonym_keys`: `name`) read from
    /// `signing`: each `{id, secret_env | secret_file, not_after}` with an id
    /// `RequestSigningKey.isValidID` accepts (at most `maxIDBytes`), unique in the list, and
    /// `not_after` an RFC 3339 time.
    static func signingKeys(_ signing: inout ConfigurationReader, _ name: String, maxIDBytes: Int = 64) -> [RequestSigningKey] {
        guard let value = signing.raw(name) else { return [] }
        let path = signing.keyPath(name)
        guard case .array(let items) = value, !items.isEmpty else {
            signing.issues.append(.init(.error, path, "must be a non-empty array of {\"id\", \"secret_env\" or \"secret_file\", \"not_after\"}"))
            return []
        }
        var keys: [RequestSigningKey] = []
        for (index, item) in items.enumerated() {
            var entry = ConfigurationReader(path: "\(path)[\(index)]", value: item, issues: &signing.issues)
            let id = entry.requiredString("id")
            let secret = secretSource(&entry, "secret", required: true)
            var notAfterMs: Int64?
            if let text = entry.string("not_after") {
                notAfterMs = RFC3339.parse(text)
                if notAfterMs == nil {
                    entry.issues.append(.init(.error, entry.keyPath("not_after"), "must be an RFC 3339 time such as 2027-01-31T00:00:00Z"))
                }
            }
            var usable = secret != nil
            if let id, !RequestSigningKey.isValidID(id) || id.utf8.count > maxIDBytes {
                entry.issues.append(.init(.error, entry.keyPath("id"), "must be 1 to \(maxIDBytes) of A-Z, a-z, 0-9, '.', '_' and '-'"))
                usable = false
            } else if let id, keys.contains(where: { $0.id == id }) {
                entry.issues.append(.init(.error, entry.keyPath("id"), "repeats key id '\(id)' (each key of a list needs its own)"))
                usable = false
            }
            let keyPath = entry.keyPath("secret" + (secret?.keySuffix ?? "_env"))
            signing.absorb(entry)
            if usable, let id, let secret {
                keys.append(RequestSigningKey(id: id, secret: secret, notAfterMs: notAfterMs, keyPath: keyPath))
            }
        }
        return keys
    }
}
