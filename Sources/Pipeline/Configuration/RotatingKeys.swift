import Contract

extension WorkerConfiguration {
    /// Every replay key, oldest first: the unnamed one (`dlq.replay_signing_secret_env` / `_file`),
    /// then `dlq.replay_keys` in the order listed. The newest not retired seals dead letters and
    /// signs replays; every key not retired verifies them.
    public var replayKeyList: [RequestSigningKey] {
        let unnamed = replaySigningSecret.map {
            RequestSigningKey(id: nil, secret: $0, keyPath: "dlq.replay_signing_secret" + $0.keySuffix)
        }
        return (unnamed.map { [$0] } ?? []) + replayKeys
    }

    /// Every audit pseudonym key, oldest first: the unnamed one (`audit.pseudonym_key_env` /
    /// `_file`), then `audit.pseudonym_keys` in the order listed.
    public var pseudonymKeyList: [RequestSigningKey] {
        let unnamed = pseudonymKey.map {
            RequestSigningKey(id: nil, secret: $0, keyPath: "audit.pseudonym_key" + $0.keySuffix)
        }
        return (unnamed.map { [$0] } ?? []) + pseudonymKeys
    }

    /// The longest pseudonym key id: `<id>:` and 32 hex digits stay within the 64 bytes an audit
    /// identifier (and the console's trace query) may have.
    public static let maximumPseudonymKeyIDBytes = 16

    /// What `config check` reports about key lifetimes at `nowMs`: request-signing keys
    /// (`signingKeyRetirements`), replay keys and pseudonym keys retired or retiring within
    /// `noticeMs`, and a list whose every key has retired.
    public func keyRetirements(nowMs: Int64, noticeMs: Int64 = keyRetirementNoticeMs) -> [ConfigurationIssue] {
        var issues = signingKeyRetirements(nowMs: nowMs, noticeMs: noticeMs)
        issues += Self.retirements(replayKeyList, nowMs: nowMs, noticeMs: noticeMs,
                                   retired: "dead letters it sealed can no longer be replayed, and replays it signs are refused",
                                   retiring: "dead letters it sealed must be replayed by then, and every worker and replay tool must hold a newer key")
        if !replayKeyList.isEmpty, replayKeyList.allSatisfy({ ($0.notAfterMs ?? .max) <= nowMs }) {
            issues.append(.init(.warning, "dlq.replay_keys", "every replay key has retired: dead letters are written without dlq.mac and nothing can be replayed"))
        }
        issues += Self.retirements(pseudonymKeyList, nowMs: nowMs, noticeMs: noticeMs,
                                   retired: "pseudonyms are no longer made with it",
                                   retiring: "audit events stop carrying its pseudonyms then; traces join across it only while both keys are listed")
        if pseudonymKeyList.allSatisfy({ ($0.notAfterMs ?? .max) <= nowMs }) {
            issues.append(.init(.warning, "audit.pseudonym_keys", "every pseudonym key has retired: the newest one listed keeps making pseudonyms"))
        }
        return issues
    }
}

/// The keys a worker makes audit pseudonyms with, read from `audit.pseudonym_key_env` / `_file`
/// (unnamed) and `audit.pseudonym_keys` (named): the current key (the newest not retired, or the
/// newest if all have) makes `card_ref` / `device_ref`, `<id>:<hex>` under a named key; the key
/// listed before it, while not retired, makes the `…_previous` twin, so events before and after a
/// rotation join on one of them.
public struct PseudonymKeys: Sendable {
    /// One key: its id (nil: unnamed), secret and retirement.
    public struct Key: Sendable {
        /// The id pseudonyms carry (`<id>:<hex>`); nil for the unnamed key.
        public var id: String?
        /// The secret.
        public var secret: Sensitive
        /// When it stops making pseudonyms (epoch ms); nil: never.
        public var notAfterMs: Int64?

        /// Creates a key.
        public init(id: String?, secret: Sensitive, notAfterMs: Int64? = nil) {
            self.id = id
            self.secret = secret
            self.notAfterMs = notAfterMs
        }
    }

    /// Every key, oldest first.
    public let keys: [Key]

    /// Keys oldest first (at least one).
    public init(keys: [Key]) {
        self.keys = keys
    }

    /// The pseudonymizer at `nowMs`: the current key, with the key before it (not retired) as its
    /// previous one.
    public func pseudonymizer(nowMs: Int64) -> Pseudonymizer {
        let live = keys.filter { ($0.notAfterMs ?? .max) > nowMs }
        let chosen = live.isEmpty ? Array(keys.suffix(1)) : Array(live.suffix(2))
        guard let current = chosen.last else { return Pseudonymizer(key: Sensitive("")) }
        let previous = chosen.count == 2 ? chosen.first : nil
        return Pseudonymizer(key: current.secret, keyID: current.id,
                             previous: previous.map { Pseudonymizer(key: $0.secret, keyID: $0.id) })
    }
}
