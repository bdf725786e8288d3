import Contract

/// The replay keys an operator tool (`dlq replay`, the console) holds: the unnamed key
/// (`dlq.replay_signing_secret_env` / `_file`) and the named ones (`dlq.replay_keys`), each
/// usable until its `not_after`. A dead letter is checked with the key its `dlq.mac_key_id` names
/// (absent: the unnamed key), so letters sealed before a rotation stay replayable until their key
/// retires; replays are signed with the current key.
public struct ReplayKeyring: Sendable {
    /// One replay key: its id (`dlq.mac_key_id`, `x-request-key-id` on replays; nil for the unnamed
    /// key), secret and retirement.
    public typealias Key = RotatingSecret

    /// Every key, oldest first (the unnamed one, then `dlq.replay_keys` in the order listed).
    public let keys: [Key]

    /// A keyring of `keys`, oldest first.
    public init(keys: [Key]) {
        self.keys = keys
    }

    /// A keyring of the signer's one key.
    public init(signer: RequestSigner) {
        self.init(keys: [Key(id: signer.keyID, secret: signer.secret)])
    }

    /// The key new seals and replays use at `nowMs`: the newest (last listed) key not retired.
    public func current(nowMs: Int64) -> Key? {
        keys.last { !$0.isRetired(nowMs: nowMs) }
    }

    /// A signer with the current key, naming it when it has an id.
    public func signer(nowMs: Int64) -> RequestSigner? {
        current(nowMs: nowMs).map { RequestSigner(secret: $0.secret, keyID: $0.id) }
    }

    /// A seal with the current key.
    public func seal(nowMs: Int64) -> DeadLetterSeal? {
        current(nowMs: nowMs).map { DeadLetterSeal(key: $0.secret, keyID: $0.id) }
    }

    /// Whether `entry`'s `dlq.mac` verifies under the key its `dlq.mac_key_id` names, and that key
    /// had not retired at `nowMs`; or why not, in a line an operator can act on (naming the key id,
    /// never a secret).
    public func verify(_ entry: DeadLetterEntry, nowMs: Int64) -> Result<Void, RecordProblem> {
        let named = entry.headers.filter { $0.key == DeadLetterHeader.macKeyID }
        guard named.count <= 1 else { return .failure(RecordProblem("more than one dlq.mac_key_id header: the record was altered; not replayed")) }
        let id = named.first.map { String(decoding: $0.value ?? [], as: UTF8.self) }
        let shown = id.map { "'\(AuditEvent.safeIdentifier($0))'" } ?? "(unnamed)"
        guard let key = keys.first(where: { $0.id == id }) else {
            return .failure(RecordProblem("sealed with replay key \(shown), which this tool does not hold (dlq.replay_keys); not replayed"))
        }
        if let notAfter = key.notAfterMs, nowMs >= notAfter {
            return .failure(RecordProblem("sealed with replay key \(shown), retired at \(RFC3339.format(milliseconds: notAfter)); not replayed: "
                                              + "send a new request instead"))
        }
        return DeadLetterSeal(key: key.secret, keyID: key.id).verify(entry)
    }
}
