import Contract
import Testing

/// `RequestSignature` v2 (CONTRACT section 11): the published test vector, computed here and by an
/// independent Python implementation of the encoding; what each covered part protects; freshness;
/// v1 only by policy.
@Suite("Request signature v2", .timeLimit(.minutes(2)))
struct RequestSignatureTests {
    static let secret = Sensitive("provisioner-test-vector-secret")
    static let key = Array("pm_test_vector".utf8)
    static let timestampMs: Int64 = 1_796_000_000_000
    static let value = Array(#"{"version":1,"request_id":"req-vector-1","program":"acme-imprint"}"#.utf8)
    static let headers: [String: [UInt8]] = [
        "kafka_replyTopic": Array("backend.replies".utf8), "kafka_replyPartition": [0, 0, 0, 3], "kafka_correlationId": [1, 2, 3, 4],
    ]
    /// The vector published in docs/CONTRACT.md.
    static let published = "v2=6acdfb6c1dcb35c28c6409a7a949deeba4efb0ff74562fbf824e54b0a513bd8f"
    /// The second published vector: the same message with `kafka_correlationId` present but null.
    static let publishedNull = "v2=cce3fe38e04ee80c1943159196d88d050bb4be93befb716e75c892e4b6c05c44"

    /// A covered header with a null value (present, no bytes): `RequestSignature.Header.null`.
    static let null: [UInt8] = [0xDE, 0xAD]

    /// The header lookup for `headers`, where a value equal to `null` stands for a null header.
    static func lookup(_ headers: [String: [UInt8]]) -> (String) -> RequestSignature.Header {
        { name in headers[name].map { $0 == null ? .null : .bytes($0) } ?? .absent }
    }

    private func sign(key: [UInt8]? = key, timestampMs: Int64 = timestampMs, value: [UInt8] = value,
                      headers: [String: [UInt8]] = headers, secret: Sensitive = secret) -> String {
        RequestSignature.signV2(secret: secret, key: key, timestampMs: timestampMs, value: value, header: Self.lookup(headers))
    }

    private func verdict(_ signature: String?, key: [UInt8]? = key, timestamp: String? = String(timestampMs), value: [UInt8] = value,
                         headers: [String: [UInt8]] = headers, nowMs: Int64 = timestampMs,
                         policy: RequestSignature.Policy = .init()) -> RequestSignature.Verdict {
        var all = headers
        all[RequestSignature.header] = signature.map { Array($0.utf8) }
        all[RequestSignature.timestampHeader] = timestamp.map { Array($0.utf8) }
        return RequestSignature.verdict(secret: Self.secret, policy: policy, key: key, value: value, nowMs: nowMs, header: Self.lookup(all))
    }

    @Test func publishedVectorMatches() {
        #expect(sign() == Self.published)
        var null = Self.headers
        null["kafka_correlationId"] = Self.null
        #expect(sign(headers: null) == Self.publishedNull)
    }

    @Test func independentPythonImplementationAgrees() throws {
        let script = """
            import hmac, hashlib, struct
            NULL = object()
            def field(b):
                if b is None: return b'\\xff\\xff\\xff\\xff'
                if b is NULL: return b'\\xff\\xff\\xff\\xfe'
                return struct.pack('>I', len(b)) + b
            covered = ["x-replay-of", "x-replay-operator", "kafka_replyTopic", "kafka_replyPartition", "kafka_correlationId"]
            def sign(headers):
                data = field(b"provisioner-request-signature-v2") + field(b"pm_test_vector") + field(b"1796000000000")
                for name in covered: data += field(name.encode()) + field(headers.get(name))
                data += field(b'{"version":1,"request_id":"req-vector-1","program":"acme-imprint"}')
                return "v2=" + hmac.new(b"provisioner-test-vector-secret", data, hashlib.sha256).hexdigest()
            headers = {"kafka_replyTopic": b"backend.replies", "kafka_replyPartition": b"\\x00\\x00\\x00\\x03", "kafka_correlationId": b"\\x01\\x02\\x03\\x04"}
            print(sign(headers))
            headers["kafka_correlationId"] = NULL
            print(sign(headers))
            """
        let output = try PythonPeer.run(script).split(separator: "\n").map(String.init)
        var null = Self.headers
        null["kafka_correlationId"] = Self.null
        #expect(output == [sign(), sign(headers: null)])
    }

    @Test func validWithinTheWindowEitherWay() {
        #expect(verdict(sign()) == .valid(scheme: "v2"))
        #expect(verdict(sign(), nowMs: Self.timestampMs + 300_000) == .valid(scheme: "v2"))
        #expect(verdict(sign(), nowMs: Self.timestampMs - 300_000) == .valid(scheme: "v2"))
    }

    @Test func staleOrFutureTimestampsAreRefused() {
        for now in [Self.timestampMs + 300_001, Self.timestampMs - 300_001, Int64.max, Int64.min, 0] {
            guard case .invalid(let reason) = verdict(sign(), nowMs: now) else {
                Issue.record("accepted at now=\(now)")
                continue
            }
            #expect(reason.contains("window"))
        }
        #expect(verdict(sign(), nowMs: Self.timestampMs + 50_000, policy: .init(maxSkewMs: 10_000)) != .valid(scheme: "v2"))
    }

    @Test func everyCoveredPartChangesTheSignature() {
        let base = sign()
        #expect(sign(key: nil) != base)
        #expect(sign(key: Array("pm_other".utf8)) != base)
        #expect(sign(timestampMs: Self.timestampMs + 1) != base)
        #expect(sign(value: Self.value + [0x20]) != base)
        for name in RequestSignature.coveredHeaders {
            var changed = Self.headers
            changed[name] = (changed[name] ?? []) + [0x41]
            #expect(sign(headers: changed) != base, "header \(name) is not covered")
            var removed = Self.headers
            if removed.removeValue(forKey: name) != nil { #expect(sign(headers: removed) != base, "removing \(name) is not covered") }
        }
        // Absent and empty differ.
        var empty = Self.headers
        empty["x-replay-of"] = []
        #expect(sign(headers: empty) != base)
        #expect(sign(key: []) != sign(key: nil))
    }

    /// CONTRACT section 12: a null header value signs as its own value, never as absent (nor as
    /// empty): a captured signed message re-sent with a covered header set to null, or with a null
    /// one added, does not verify.
    @Test func nullSignsAsItsOwnValue() {
        for name in RequestSignature.coveredHeaders {
            var null = Self.headers
            null[name] = Self.null
            var absent = Self.headers
            absent[name] = nil
            var empty = Self.headers
            empty[name] = []
            #expect(Set([sign(headers: null), sign(headers: absent), sign(headers: empty)]).count == 3, "\(name): null, absent and empty must differ")
            #expect(verdict(sign(), headers: null) == .invalid("the request signature does not match"), "\(name) set to null")
            #expect(verdict(sign(headers: null), headers: null) == .valid(scheme: "v2"), "\(name) signed as null")
            #expect(verdict(sign(headers: null), headers: absent) == .invalid("the request signature does not match"))
        }
    }

    @Test func tamperedMessagesAreRefused() {
        let signature = sign()
        #expect(verdict(signature, key: Array("pm_other".utf8)) == .invalid("the request signature does not match"))
        #expect(verdict(signature, value: Self.value + [0x20]) == .invalid("the request signature does not match"))
        var redirected = Self.headers
        redirected["kafka_replyTopic"] = Array("attacker.replies".utf8)
        #expect(verdict(signature, headers: redirected) == .invalid("the request signature does not match"))
        var replay = Self.headers
        replay["x-replay-of"] = Array("provisioning.dlq:0:1".utf8)
        #expect(verdict(signature, headers: replay) == .invalid("the request signature does not match"))
        // The timestamp is signed: moving it into the window breaks the signature.
        #expect(verdict(signature, timestamp: String(Self.timestampMs + 1)) == .invalid("the request signature does not match"))
    }

    @Test func malformedHeadersAreRefusedWithoutTrapping() {
        for bad in ["", "v2=", "v2=zz", "v2=" + String(repeating: "0", count: 62), "v3=" + String(repeating: "0", count: 64),
                    "v2=" + String(repeating: "0", count: 200)] {
            #expect(verdict(bad) != .valid(scheme: "v2"), "\(bad)")
        }
        #expect(verdict(nil) == .invalid("the request is not signed (header x-request-signature is missing)"))
        for timestamp in [nil, "", "-1", "1e12", "99999999999999999999", " 1796000000000", "0x1"] {
            guard case .invalid = verdict(sign(), timestamp: timestamp) else {
                Issue.record("accepted timestamp \(timestamp ?? "nil")")
                continue
            }
        }
    }

    @Test func v1OnlyWherePolicyAcceptsIt() {
        let v1 = RequestSignature.signV1(secret: Self.secret, value: Self.value)
        #expect(verdict(v1, timestamp: nil) == .invalid("v1 signatures are not accepted for this program (sign with v2)"))
        #expect(verdict(v1, timestamp: nil, policy: .init(acceptsV1: true)) == .valid(scheme: "v1"))
        #expect(verdict(RequestSignature.signV1(secret: Sensitive("other"), value: Self.value), timestamp: nil,
                        policy: .init(acceptsV1: true)) == .invalid("the request signature does not match"))
    }
}
