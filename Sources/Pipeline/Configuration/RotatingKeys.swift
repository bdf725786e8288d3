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
