import Contract
import Kafka
import Recovery
import Testing
@testable import Pipeline

/// `RequestAuthenticator` as a pure decision (time passed in, no broker): who must sign, which key
/// a replay needs, and what a message naming no configured program must carry.
@Suite("RequestAuthenticator", .timeLimit(.minutes(1)))
struct RequestAuthenticatorTests {
    static let now: Int64 = 1_796_000_000_000
    static let programSecret = Sensitive("program-secret")
    static let replaySecret = Sensitive("replay-secret")
    /// The partition the signed messages here are written to and read from.
    static let partition: Int32 = 4
    let value = Array(#"{"version":1,"request_id":"r1","program":"signed"}"#.utf8)
    let key = Array("pm_1".utf8)

    func authenticator(replayKey: Bool = true, acceptsV1: Bool = false) -> RequestAuthenticator {
        RequestAuthenticator(programs: ["signed": .init(secret: Self.programSecret, policy: .init(acceptsV1: acceptsV1))],
                             replaySecret: replayKey ? Self.replaySecret : nil)
    }

    func headers(_ secret: Sensitive?, replayOf: String? = nil, operatorName: String? = nil, at: Int64 = now) -> [KafkaHeader] {
        var headers: [KafkaHeader] = []
        if let replayOf { headers.append(KafkaHeader(key: DeadLetterHeader.replayOf, string: replayOf)) }
        if let operatorName { headers.append(KafkaHeader(key: DeadLetterHeader.replayOperator, string: operatorName)) }
        guard let secret else { return headers }
        return RequestSigner(secret: secret).signed(key: key, value: value, headers: headers, partition: Self.partition, nowMs: at)
    }

    func verdict(_ authenticator: RequestAuthenticator, program: String?, configured: Bool = true, _ headers: [KafkaHeader],
                 partition: Int32 = partition, now: Int64 = now) -> RequestAuthenticator.Verdict {
        authenticator.verdict(program: program, isConfigured: configured, key: key, value: value, headers: headers, partition: partition,
                              nowMs: now)
    }

    func isUnauthentic(_ verdict: RequestAuthenticator.Verdict) -> Bool {
        if case .unauthentic = verdict { true } else { false }
    }

    @Test func unsignedProgramsNeedNothing() {
        #expect(verdict(authenticator(), program: "open", headers(nil)) == .notRequired)
        #expect(verdict(authenticator(), program: "open", headers(nil, replayOf: "provisioning.dlq:0:1")) == .notRequired)
        #expect(verdict(RequestAuthenticator(programs: [:]), program: nil, configured: false, headers(nil)) == .notRequired)
    }

    /// An unsigned program's replay is an authorised replay (operator named, and
    /// `Intake` lets it past the duplicate horizon) only when the replay key verifies it; anyone can
    /// add `x-replay-of` to an unsigned message, which is then answered as an ordinary one.
    @Test func replaysOfUnsignedProgramsAreAuthorisedOnlyByTheReplayKey() {
        let dlq = "provisioning.dlq:0:7"
        for auth in [authenticator(), RequestAuthenticator(programs: [:], replaySecret: Self.replaySecret)] {
            #expect(verdict(auth, program: "open", headers(Self.replaySecret, replayOf: dlq, operatorName: "alice")) == .authentic(replayBy: "alice"))
            #expect(verdict(auth, program: "open", headers(nil, replayOf: dlq, operatorName: "alice")) == .notRequired)
            #expect(verdict(auth, program: "open", headers(Self.programSecret, replayOf: dlq, operatorName: "alice")) == .notRequired)
        }
        #expect(verdict(authenticator(replayKey: false), program: "open", headers(Self.replaySecret, replayOf: dlq)) == .notRequired)
    }

    @Test func signedProgramNeedsItsOwnKeyFresh() {
        let auth = authenticator()
        #expect(verdict(auth, program: "signed", headers(Self.programSecret)) == .authentic(replayBy: nil))
        #expect(isUnauthentic(verdict(auth, program: "signed", headers(nil))))
        #expect(isUnauthentic(verdict(auth, program: "signed", headers(Self.replaySecret))))
        #expect(isUnauthentic(verdict(auth, program: "signed", headers(Self.programSecret, at: Self.now - 301_000))))
    }

    /// A signed message captured and re-sent with a covered header set to null must not verify: a
    /// null value signs as itself, not as absent, and would route as malformed.
    /// A message its producer signed with a null header verifies (routing then refuses it).
    @Test func nullCoveredHeadersAreNeverAuthentic() {
        let signed = headers(Self.programSecret)
        #expect(verdict(authenticator(), program: "signed", signed) == .authentic(replayBy: nil))
        for name in RequestSignature.Version.v3.coveredHeaders {
            let withNull = signed + [KafkaHeader(key: name, value: nil)]
            #expect(isUnauthentic(verdict(authenticator(), program: "signed", withNull)), "\(name)")
            #expect(isUnauthentic(verdict(authenticator(), program: "other", configured: false, withNull)), "\(name)")
        }
        let signedWithNull = RequestSigner(secret: Self.programSecret).signed(key: key, value: value,
                                                                              headers: [KafkaHeader(key: "kafka_correlationId", value: nil)],
                                                                              partition: Self.partition, nowMs: Self.now)
        #expect(verdict(authenticator(), program: "signed", signedWithNull) == .authentic(replayBy: nil))
        // A program that does not sign keeps its own rules (routing refuses the null header).
        #expect(verdict(authenticator(), program: "open", [KafkaHeader(key: "kafka_correlationId", value: nil)]) == .notRequired)
    }

    @Test func messagesNamingNoConfiguredProgramMustBeSignedByAKeyHeldHere() {
        let auth = authenticator()
        #expect(isUnauthentic(verdict(auth, program: nil, configured: false, headers(nil))))
        #expect(isUnauthentic(verdict(auth, program: "elsewhere", configured: false, headers(nil))))
        #expect(isUnauthentic(verdict(auth, program: "elsewhere", configured: false, headers(Sensitive("someone-else")))))
        #expect(verdict(auth, program: "elsewhere", configured: false, headers(Self.programSecret)) == .authentic(replayBy: nil))
        #expect(verdict(auth, program: nil, configured: false, headers(Self.programSecret)) == .authentic(replayBy: nil))
    }

    @Test func replaysOfSignedProgramsNeedTheReplayKey() {
        let auth = authenticator()
        let dlq = "provisioning.dlq:0:7"
        #expect(verdict(auth, program: "signed", headers(Self.replaySecret, replayOf: dlq, operatorName: "alice"))
                == .authentic(replayBy: "alice"))
        #expect(isUnauthentic(verdict(auth, program: "signed", headers(Self.programSecret, replayOf: dlq, operatorName: "alice"))))
        #expect(isUnauthentic(verdict(auth, program: "signed", headers(nil, replayOf: dlq))))
        // The operator's name and the replayed entry are covered by the signature.
        var moved = headers(Self.replaySecret, replayOf: dlq, operatorName: "alice")
        moved = moved.map { $0.key == DeadLetterHeader.replayOperator ? KafkaHeader(key: $0.key, string: "mallory") : $0 }
        #expect(isUnauthentic(verdict(auth, program: "signed", moved)))
        #expect(isUnauthentic(verdict(authenticator(replayKey: false), program: "signed",
                                      headers(Self.replaySecret, replayOf: dlq, operatorName: "alice"))))
    }

    /// A signature names the partition its record was written to: a byte copy of the message (a
    /// producer's or an operator's replay) read from any other partition is unauthentic, and so is
    /// one whose `x-request-partition` was changed to the copy's partition.
    @Test func signedMessagesAreAuthenticOnlyOnTheirPartition() {
        let auth = authenticator()
        let dlq = "provisioning.dlq:0:7"
        let signed = headers(Self.programSecret)
        let replay = headers(Self.replaySecret, replayOf: dlq, operatorName: "alice")
        for partition in Int32(0)...7 where partition != Self.partition {
            #expect(isUnauthentic(verdict(auth, program: "signed", signed, partition: partition)), "copy on \(partition)")
            #expect(isUnauthentic(verdict(auth, program: nil, configured: false, signed, partition: partition)), "copy on \(partition)")
            #expect(isUnauthentic(verdict(auth, program: "signed", replay, partition: partition)), "replay copy on \(partition)")
            let moved = signed.map { $0.key == RequestSignature.partitionHeader ? KafkaHeader(key: $0.key, string: String(partition)) : $0 }
            #expect(isUnauthentic(verdict(auth, program: "signed", moved, partition: partition)), "moved header on \(partition)")
        }
        // An unsigned program's replay copied to another partition is an ordinary message (no replay's standing).
        #expect(verdict(auth, program: "open", headers(Self.replaySecret, replayOf: dlq, operatorName: "alice"), partition: 0) == .notRequired)
    }

    /// v2 (no partition) only where a program opts in (`accept_v2`), for moving producers to v3.
    @Test func v2OnlyWhereConfigured() {
        var v2 = [KafkaHeader(key: RequestSignature.timestampHeader, string: String(Self.now))]
        v2.append(KafkaHeader(key: RequestSignature.header, string: RequestSignature.sign(.v2, secret: Self.programSecret, key: key,
                                                                                           timestampMs: Self.now, value: value) { _ in .absent }))
        #expect(isUnauthentic(verdict(authenticator(), program: "signed", v2)))
        let optedIn = RequestAuthenticator(programs: ["signed": .init(secret: Self.programSecret, policy: .init(acceptsV2: true))])
        #expect(verdict(optedIn, program: "signed", v2) == .authentic(replayBy: nil))
        #expect(verdict(optedIn, program: "signed", v2, partition: 0) == .authentic(replayBy: nil), "v2 covers no partition")
    }

    /// Key rotation: a program with named keys accepts a message signed by any key it lists, by
    /// the id the message names (covered by the signature), until that key's `not_after`; an
    /// unknown id, a missing id (no unnamed key), or an id swapped after signing is refused.
    @Test func namedKeysAreAcceptedUntilTheyRetire() {
        let old = Sensitive("old-key"), new = Sensitive("new-key"), retired = Sensitive("retired-key")
        let auth = RequestAuthenticator(programs: ["signed": .init(keys: [.init(id: "2026-11", secret: old, notAfterMs: Self.now + 60_000),
                                                                          .init(id: "2026-12", secret: new),
                                                                          .init(id: "2026-10", secret: retired, notAfterMs: Self.now - 1)],
                                                                   policy: .init())])
        func signed(_ secret: Sensitive, id: String?, at: Int64 = Self.now) -> [KafkaHeader] {
            RequestSigner(secret: secret, keyID: id).signed(key: key, value: value, headers: [], partition: Self.partition, nowMs: at)
        }
        #expect(verdict(auth, program: "signed", signed(old, id: "2026-11")) == .authentic(replayBy: nil))
        #expect(verdict(auth, program: "signed", signed(new, id: "2026-12")) == .authentic(replayBy: nil))
        #expect(verdict(auth, program: nil, configured: false, signed(new, id: "2026-12")) == .authentic(replayBy: nil))
        // The old key retires at now + 60 s: a message it signed 1 s before is refused once the time has come.
        #expect(verdict(auth, program: "signed", signed(old, id: "2026-11", at: Self.now + 59_000), now: Self.now + 60_000)
                == .unauthentic("program signed: signing key '2026-11' retired at \(RFC3339.format(milliseconds: Self.now + 60_000))"))
        #expect(isUnauthentic(verdict(auth, program: "signed", signed(retired, id: "2026-10"))))
        #expect(verdict(auth, program: "signed", signed(new, id: "2027-01"))
                == .unauthentic("program signed: signing key '2027-01' is not one of this program's keys"))
        #expect(isUnauthentic(verdict(auth, program: "signed", signed(new, id: nil))), "no unnamed key")
        #expect(isUnauthentic(verdict(auth, program: "signed", signed(old, id: "2026-12"))), "signed by one key, naming another")
        let swapped = signed(old, id: "2026-11").map { $0.key == RequestSignature.keyIDHeader ? KafkaHeader(key: $0.key, string: "2026-12") : $0 }
        #expect(isUnauthentic(verdict(auth, program: "signed", swapped)), "the key id is covered")
        // A program with an unnamed key and named ones accepts both.
        let mixed = RequestAuthenticator(programs: ["signed": .init(keys: [.init(id: nil, secret: old), .init(id: "next", secret: new)], policy: .init())])
        #expect(verdict(mixed, program: "signed", signed(old, id: nil)) == .authentic(replayBy: nil))
        #expect(verdict(mixed, program: "signed", signed(new, id: "next")) == .authentic(replayBy: nil))
    }

    @Test func legacyV1OnlyWhereConfigured() {
        let v1 = [KafkaHeader(key: RequestSignature.header, string: RequestSignature.signV1(secret: Self.programSecret, value: value))]
        #expect(isUnauthentic(verdict(authenticator(), program: "signed", v1)))
        #expect(verdict(authenticator(acceptsV1: true), program: "signed", v1) == .authentic(replayBy: nil))
    }
}

/// The operator name `dlq replay` writes: the Kafka principal when SASL names one.
@Suite("Replay operator name", .timeLimit(.minutes(1)))
struct ReplayOperatorNameTests {
    @Test func principalWinsAndTheLabelStandsBeside() {
        #expect(DeadLetterReplayer.operatorName(properties: [:], label: "alice") == "alice")
        #expect(DeadLetterReplayer.operatorName(properties: [:], label: nil) == nil)
        #expect(DeadLetterReplayer.operatorName(properties: ["sasl.username": "ops-bob"], label: nil) == "ops-bob")
        #expect(DeadLetterReplayer.operatorName(properties: ["sasl.username": "ops-bob"], label: "ops-bob") == "ops-bob")
        #expect(DeadLetterReplayer.operatorName(properties: ["sasl.username": "ops-bob"], label: "alice") == "ops-bob:alice")
    }
}
