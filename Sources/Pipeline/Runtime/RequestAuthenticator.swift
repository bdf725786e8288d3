import Contract
import Kafka
import Recovery

/// Decides whether a message may be answered at all (CONTRACT section 11). Programs configured
/// with `request_signing` accept only messages signed with their secret (v3, read from the
/// partition it names; v2 or v1 where `accept_v2` / `accept_v1` say so); an operator's replay
/// (`x-replay-of`) of such a program must be signed with a replay key instead (the one its
/// `x-request-key-id` names, not retired). A message that names no configured program is attributable only when
/// no program signs, or when one program's secret (or the replay key) verifies it: otherwise anyone
/// could publish an answer for a request id they do not own. A replay of an unsigned program is
/// `authentic` (an authorised replay, naming its operator) only when the replay key verifies it.
///
/// Runs before anything that can publish a result or touch the duplicate filter, markers or the
/// nonce guard. Pure: time is passed in.
struct RequestAuthenticator: Sendable {
    /// A signed program's keys and policy.
    struct Signing: Sendable {
        /// One key: its id (`x-request-key-id`; nil for the unnamed key), secret and retirement.
        struct Key: Sendable {
            var id: String?
            var secret: Sensitive
            /// Messages it signs are refused from this time (epoch ms); nil: never.
            var notAfterMs: Int64?
        }

        var keys: [Key]
        var policy: RequestSignature.Policy

        /// A program with one unnamed key.
        init(secret: Sensitive, policy: RequestSignature.Policy) {
            self.init(keys: [Key(id: nil, secret: secret)], policy: policy)
        }

        /// A program with `keys` (each accepted until its `notAfterMs`).
        init(keys: [Key], policy: RequestSignature.Policy) {
            self.keys = keys
            self.policy = policy
        }

        /// The verdict on a message by the key it names (`x-request-key-id`, absent: the unnamed
        /// key), read from `partition` at `nowMs`: the signature must verify under that key, and
        /// the key must not have retired. A message never tries every key: one header, one HMAC.
        func verdict(key: [UInt8]?, value: [UInt8], partition: Int32, nowMs: Int64,
                     header: (String) -> RequestSignature.Header) -> RequestSignature.Verdict {
            let chosen: Key
            switch header(RequestSignature.keyIDHeader) {
            case .absent:
                guard let unnamed = keys.first(where: { $0.id == nil }) else {
                    return .invalid("the request names no signing key (\(RequestSignature.keyIDHeader)), and this program's keys all have ids")
                }
                chosen = unnamed
            case .null:
                return .invalid("the \(RequestSignature.keyIDHeader) header is null")
            case .bytes(let bytes):
                let id = String(decoding: bytes, as: UTF8.self)
                guard let named = keys.first(where: { $0.id == id }) else {
                    return .invalid("signing key '\(AuditEvent.safeIdentifier(id))' is not one of this program's keys")
                }
                chosen = named
            }
            let verdict = RequestSignature.verdict(secret: chosen.secret, policy: policy, key: key, value: value, partition: partition,
                                                   nowMs: nowMs, header: header)
            if case .valid = verdict, let notAfter = chosen.notAfterMs, nowMs >= notAfter {
                return .invalid("signing key '\(chosen.id ?? "unnamed")' retired at \(RFC3339.format(milliseconds: notAfter))")
            }
            return verdict
        }
    }

    /// How a message was judged.
    enum Verdict: Sendable, Equatable {
        /// The message's program requires no signature.
        case notRequired
        /// Signed correctly; `replayBy` is the operator named by a signed replay.
        case authentic(replayBy: String?)
        /// Must get no answer: audited, dead-lettered `unauthenticated`, counted.
        case unauthentic(String)
    }

    let programs: [String: Signing]
    /// The keys `dlq replay` signs replays with (`dlq.replay_signing_secret_env` / `_file`, the
    /// unnamed one, and `dlq.replay_keys`), each accepted until its `not_after`, with the freshness
    /// window for replay signatures; nil when the worker has none.
    let replay: Signing?

    /// An authenticator for `programs` and one unnamed replay key.
    init(programs: [String: Signing], replaySecret: Sensitive? = nil, replayPolicy: RequestSignature.Policy = .init()) {
        self.init(programs: programs, replayKeys: replaySecret.map { [Signing.Key(id: nil, secret: $0)] } ?? [], replayPolicy: replayPolicy)
    }

    /// An authenticator for `programs` and `replayKeys`, oldest first (none: replays of signed
    /// programs are refused).
    init(programs: [String: Signing], replayKeys: [Signing.Key], replayPolicy: RequestSignature.Policy = .init()) {
        self.programs = programs
        replay = replayKeys.isEmpty ? nil : Signing(keys: replayKeys, policy: replayPolicy)
    }

    /// The seal for dead letters written at `nowMs`: a MAC with the newest replay key not retired
    /// (nil when there is none).
    func deadLetterSeal(nowMs: Int64) -> DeadLetterSeal? {
        replay?.keys.last { ($0.notAfterMs ?? .max) > nowMs }.map { DeadLetterSeal(key: $0.secret, keyID: $0.id) }
    }

    /// Whether any program requires signed requests.
    var isEnforcing: Bool { !programs.isEmpty }

    /// Whether `program` requires signed requests.
    func requiresSignature(_ program: String) -> Bool { programs[program] != nil }

    /// Judges a message naming `program` (nil when it names none) that `configured` says whether
    /// this worker serves, read from `partition` of the requests topic. A covered header with a
    /// null value signs as null, not as absent (`RequestSignature.Header`): a captured signed
    /// message re-sent with one set to null does not verify; a v3 signature verifies only on the
    /// partition it names, so a byte copy on another partition is unauthentic.
    func verdict(program: String?, isConfigured: Bool, key: [UInt8]?, value: [UInt8], headers: [KafkaHeader], partition: Int32,
                 nowMs: Int64) -> Verdict {
        let header: (String) -> RequestSignature.Header = { name in RequestSignature.Header(headers.last { $0.key == name }.map(\.value)) }
        let isReplay = header(DeadLetterHeader.replayOf) != .absent
        if let program, isConfigured, let signing = programs[program] {
            if isReplay { return replayVerdict(key: key, value: value, partition: partition, nowMs: nowMs, header: header) }
            switch signing.verdict(key: key, value: value, partition: partition, nowMs: nowMs, header: header) {
            case .valid: return .authentic(replayBy: nil)
            case .invalid(let reason): return .unauthentic("program \(program): \(reason)")
            }
        }
        // An unsigned program (or nothing here signs): answerable. Its replay is authorised (and its
        // operator named) only when the replay key verifies it; otherwise it gets no replay's
        // privileges (`Intake`: the duplicate horizon still applies).
        if (program != nil && isConfigured) || !isEnforcing {
            guard isReplay, replay != nil,
                  case .authentic(let replayBy) = replayVerdict(key: key, value: value, partition: partition, nowMs: nowMs, header: header)
            else { return .notRequired }
            return .authentic(replayBy: replayBy)
        }
        // Names no program this worker serves: answerable only if a key held here verifies it.
        if isReplay { return replayVerdict(key: key, value: value, partition: partition, nowMs: nowMs, header: header) }
        for signing in programs.values {
            if case .valid = signing.verdict(key: key, value: value, partition: partition, nowMs: nowMs, header: header) {
                return .authentic(replayBy: nil)
            }
        }
        return .unauthentic("the message names no configured program and is not signed by a key this worker holds")
    }

    private func replayVerdict(key: [UInt8]?, value: [UInt8], partition: Int32, nowMs: Int64,
                               header: (String) -> RequestSignature.Header) -> Verdict {
        guard let replay else {
            return .unauthentic("a replay of a signed program must be signed with the replay key, and this worker has none (dlq.replay_signing_secret_env or dlq.replay_keys)")
        }
        switch replay.verdict(key: key, value: value, partition: partition, nowMs: nowMs, header: header) {
        case .valid:
            let name = header(DeadLetterHeader.replayOperator).value.map { String(decoding: $0, as: UTF8.self) }
            return .authentic(replayBy: name.map(AuditEvent.safeIdentifier) ?? "unknown")
        case .invalid(let reason):
            return .unauthentic("replay: \(reason) (replays are accepted only when signed with the replay key)")
        }
    }
}
