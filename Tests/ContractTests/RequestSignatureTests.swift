import Contract
import Testing

/// `RequestSignature` v3 and v2 (docs/CONTRACT.md "Signature v3"): the published test vectors,
/// computed here and by an independent Python implementation of the encoding and of Kafka's murmur2;
/// what each covered part protects; freshness; the partition rule; v2 and v1 only by policy.
@Suite("Request signature", .timeLimit(.minutes(2)))
struct RequestSignatureTests {
    static let secret = Sensitive("provisioner-test-vector-secret")
    static let key = Array("pm_test_vector".utf8)
    static let timestampMs: Int64 = 1_796_000_000_000
    static let value = Array(#"{"version":1,"request_id":"req-vector-1","program":"acme-imprint"}"#.utf8)
    /// The vector's partition: murmur2 of its key on a topic of 5 partitions.
    static let partition: Int32 = 4
    static let headers: [String: [UInt8]] = [
        "x-request-partition": Array("4".utf8), "x-request-key-id": Array("2026-12".utf8),
        "kafka_replyTopic": Array("backend.replies".utf8), "kafka_replyPartition": [0, 0, 0, 3], "kafka_correlationId": [1, 2, 3, 4],
    ]
    /// The vectors published in docs/CONTRACT.md: v3, then the same message with
    /// `kafka_correlationId` present but null.
    static let published = "v3=0d6c8055f9d588394731c2545d282740e5f489e2953afe76a4f84943ed2e3de7"
    static let publishedNull = "v3=8dc410587141bdb95a285a57777d05389907cd7a2575dce865f34099a491686a"
    /// v3 signed by an unnamed key: without `x-request-key-id`.
    static let publishedUnnamed = "v3=f3b8549e11e9a9a4b02a1717d99225cbd0665e3b4535c79fc986ef63987f9727"
    /// The v2 vectors (v2 ignores `x-request-partition` and `x-request-key-id`).
    static let publishedV2 = "v2=6acdfb6c1dcb35c28c6409a7a949deeba4efb0ff74562fbf824e54b0a513bd8f"
    static let publishedV2Null = "v2=cce3fe38e04ee80c1943159196d88d050bb4be93befb716e75c892e4b6c05c44"

    /// A covered header with a null value (present, no bytes): `RequestSignature.Header.null`.
    static let null: [UInt8] = [0xDE, 0xAD]

    /// The header lookup for `headers`, where a value equal to `null` stands for a null header.
    static func lookup(_ headers: [String: [UInt8]]) -> (String) -> RequestSignature.Header {
        { name in headers[name].map { $0 == null ? .null : .bytes($0) } ?? .absent }
    }

    private func sign(_ version: RequestSignature.Version = .v3, key: [UInt8]? = key, timestampMs: Int64 = timestampMs,
                      value: [UInt8] = value, headers: [String: [UInt8]] = headers, secret: Sensitive = secret) -> String {
        RequestSignature.sign(version, secret: secret, key: key, timestampMs: timestampMs, value: value, header: Self.lookup(headers))
    }

    private func verdict(_ signature: String?, key: [UInt8]? = key, timestamp: String? = String(timestampMs), value: [UInt8] = value,
                         headers: [String: [UInt8]] = headers, partition: Int32 = partition, nowMs: Int64 = timestampMs,
                         policy: RequestSignature.Policy = .init()) -> RequestSignature.Verdict {
        var all = headers
        all[RequestSignature.header] = signature.map { Array($0.utf8) }
        all[RequestSignature.timestampHeader] = timestamp.map { Array($0.utf8) }
        return RequestSignature.verdict(secret: Self.secret, policy: policy, key: key, value: value, partition: partition, nowMs: nowMs,
                                        header: Self.lookup(all))
    }

    @Test func publishedVectorsMatch() {
        var null = Self.headers
        null["kafka_correlationId"] = Self.null
        #expect(sign() == Self.published)
        #expect(sign(headers: null) == Self.publishedNull)
        var unnamed = Self.headers
        unnamed["x-request-key-id"] = nil
        #expect(sign(headers: unnamed) == Self.publishedUnnamed)
        #expect(sign(.v2) == Self.publishedV2)
        #expect(sign(.v2, headers: null) == Self.publishedV2Null)
        #expect(RequestPartitioner.partition(key: Self.key, count: 5) == Self.partition)
    }

    /// Kafka's own murmur2 test values (the Java client's `UtilsTest`), so a producer in any client
    /// with the default keyed partitioner picks the partition the contract names.
    @Test func murmur2MatchesKafka() {
        let cases: [(String, Int32)] = [("21", -973_932_308), ("foobar", -790_332_482), ("a-little-bit-long-string", -985_981_536),
                                        ("a-little-bit-longer-string", -1_486_304_829),
                                        ("lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58_897_971), ("abc", 479_470_107)]
        for (text, expected) in cases { #expect(RequestPartitioner.murmur2(Array(text.utf8)) == expected, "\(text)") }
        #expect(RequestPartitioner.partition(key: Array("a-little-bit-longer-string".utf8), count: 6) == 5)
        for _ in 0..<20 { #expect((0..<3).contains(RequestPartitioner.partition(key: nil, count: 3))) }
    }

    @Test func independentPythonImplementationAgrees() throws {
        let script = """
            import hmac, hashlib, struct
            NULL = object()
            def field(b):
                if b is None: return b'\\xff\\xff\\xff\\xff'
                if b is NULL: return b'\\xff\\xff\\xff\\xfe'
                return struct.pack('>I', len(b)) + b
            routing = ["x-replay-of", "x-replay-operator", "kafka_replyTopic", "kafka_replyPartition", "kafka_correlationId"]
            covered = {"v2": routing, "v3": ["x-request-partition", "x-request-key-id"] + routing}
            def sign(version, headers):
                data = field(b"provisioner-request-signature-" + version.encode()) + field(b"pm_test_vector") + field(b"1796000000000")
                for name in covered[version]: data += field(name.encode()) + field(headers.get(name))
                data += field(b'{"version":1,"request_id":"req-vector-1","program":"acme-imprint"}')
                return version + "=" + hmac.new(b"provisioner-test-vector-secret", data, hashlib.sha256).hexdigest()
            def murmur2(data):
                m = 0x5bd1e995
                h = (0x9747b28c ^ len(data)) & 0xffffffff
                for i in range(0, len(data) - len(data) % 4, 4):
                    k = int.from_bytes(data[i:i + 4], "little")
                    k = (k * m) & 0xffffffff; k ^= k >> 24; k = (k * m) & 0xffffffff
                    h = ((h * m) & 0xffffffff) ^ k
                tail = data[len(data) - len(data) % 4:]
                if len(tail) == 3: h ^= tail[2] << 16
                if len(tail) >= 2: h ^= tail[1] << 8
                if len(tail) >= 1: h = ((h ^ tail[0]) * m) & 0xffffffff
                h ^= h >> 13; h = (h * m) & 0xffffffff; h ^= h >> 15
                return h
            headers = {"kafka_replyTopic": b"backend.replies", "kafka_replyPartition": b"\\x00\\x00\\x00\\x03",
                       "kafka_correlationId": b"\\x01\\x02\\x03\\x04"}
            headers["x-request-partition"] = str((murmur2(b"pm_test_vector") & 0x7fffffff) % 5).encode()
            headers["x-request-key-id"] = b"2026-12"
            print(sign("v3", headers)); print(sign("v2", headers))
            unnamed = dict(headers); del unnamed["x-request-key-id"]
            print(sign("v3", unnamed))
            headers["kafka_correlationId"] = NULL
            print(sign("v3", headers)); print(sign("v2", headers))
            for key in [b"", b"a", b"ab", b"abc", b"pm_7Hq2", "pm_ü€".encode()] + [bytes(range(n)) for n in range(4, 40, 7)]:
                print((murmur2(key) & 0x7fffffff) % 1000003)
            """
        let keys: [[UInt8]] = [[], Array("a".utf8), Array("ab".utf8), Array("abc".utf8), Array("pm_7Hq2".utf8), Array("pm_ü€".utf8)]
            + stride(from: 4, to: 40, by: 7).map { Array(0..<UInt8($0)) }
        let output = try PythonPeer.run(script).split(separator: "\n").map(String.init)
        var null = Self.headers
        null["kafka_correlationId"] = Self.null
        var unnamed = Self.headers
        unnamed["x-request-key-id"] = nil
        #expect(Array(output.prefix(5)) == [sign(), sign(.v2), sign(headers: unnamed), sign(headers: null), sign(.v2, headers: null)])
        #expect(Array(output.dropFirst(5)) == keys.map { String(RequestPartitioner.partition(key: $0, count: 1_000_003)) })
    }

    @Test func validWithinTheWindowEitherWay() {
        #expect(verdict(sign()) == .valid(scheme: "v3"))
        #expect(verdict(sign(), nowMs: Self.timestampMs + 300_000) == .valid(scheme: "v3"))
        #expect(verdict(sign(), nowMs: Self.timestampMs - 300_000) == .valid(scheme: "v3"))
    }

    @Test func staleOrFutureTimestampsAreRefused() {
        for now in [Self.timestampMs + 300_001, Self.timestampMs - 300_001, Int64.max, Int64.min, 0] {
            guard case .invalid(let reason) = verdict(sign(), nowMs: now) else {
                Issue.record("accepted at now=\(now)")
                continue
            }
            #expect(reason.contains("window"))
        }
        #expect(verdict(sign(), nowMs: Self.timestampMs + 50_000, policy: .init(maxSkewMs: 10_000)) != .valid(scheme: "v3"))
    }

    @Test func everyCoveredPartChangesTheSignature() {
        let base = sign()
        #expect(sign(key: nil) != base)
        #expect(sign(key: Array("pm_other".utf8)) != base)
        #expect(sign(timestampMs: Self.timestampMs + 1) != base)
        #expect(sign(value: Self.value + [0x20]) != base)
        for name in RequestSignature.Version.v3.coveredHeaders {
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
        for name in RequestSignature.Version.v3.coveredHeaders {
            var null = Self.headers
            null[name] = Self.null
            var absent = Self.headers
            absent[name] = nil
            var empty = Self.headers
            empty[name] = []
            #expect(Set([sign(headers: null), sign(headers: absent), sign(headers: empty)]).count == 3, "\(name): null, absent and empty must differ")
            #expect(verdict(sign(), headers: null) == .invalid("the request signature does not match"), "\(name) set to null")
            // Signed as null it verifies, except the partition, which a v3 signature must name.
            #expect((verdict(sign(headers: null), headers: null) == .valid(scheme: "v3")) == (name != RequestSignature.partitionHeader),
                    "\(name) signed as null")
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
        for bad in ["", "v2=", "v2=zz", "v2=" + String(repeating: "0", count: 62), "v3=" + String(repeating: "0", count: 64), "v4=" + String(repeating: "0", count: 64),
                    "v2=" + String(repeating: "0", count: 200)] {
            #expect(verdict(bad) != .valid(scheme: "v3"), "\(bad)")
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
        #expect(verdict(v1, timestamp: nil) == .invalid("v1 signatures are not accepted for this program (sign with v3)"))
        #expect(verdict(v1, timestamp: nil, policy: .init(acceptsV1: true)) == .valid(scheme: "v1"))
        #expect(verdict(RequestSignature.signV1(secret: Sensitive("other"), value: Self.value), timestamp: nil,
                        policy: .init(acceptsV1: true)) == .invalid("the request signature does not match"))
    }

    /// A v3 signature holds only on the partition it names: the byte copy read from any other
    /// partition is refused, saying so; the partition header is required, decimal, and covered.
    @Test func v3HoldsOnlyOnTheSignedPartition() {
        let signature = sign()
        #expect(verdict(signature) == .valid(scheme: "v3"))
        for partition in [Int32(0), 1, 2, 3, 5, 40, Int32.max] {
            #expect(verdict(signature, partition: partition)
                    == .invalid("the request was signed for partition 4 and read from partition \(partition): a copy on another partition is not answered"))
        }
        // Rewriting the header to the copy's partition breaks the signature.
        var moved = Self.headers
        moved["x-request-partition"] = Array("1".utf8)
        #expect(verdict(signature, headers: moved, partition: 1) == .invalid("the request signature does not match"))
        // Signed without the header, or with one that is not a partition number: refused even on "its" partition.
        for bad in [nil, "", "-1", "+4", "04x", " 4", "2147483648", "99999999999"] as [String?] {
            var headers = Self.headers
            headers["x-request-partition"] = bad.map { Array($0.utf8) }
            #expect(verdict(sign(headers: headers), headers: headers)
                    == .invalid("a v3 signature needs header x-request-partition (the partition written to, decimal)"), "\(bad ?? "absent")")
        }
        var leadingZero = Self.headers
        leadingZero["x-request-partition"] = Array("0004".utf8)
        #expect(verdict(sign(headers: leadingZero), headers: leadingZero) == .valid(scheme: "v3"))
    }

    /// v2 covers no partition: refused unless the policy accepts it, and then valid on any partition.
    @Test func v2OnlyWherePolicyAcceptsIt() {
        let v2 = sign(.v2)
        #expect(verdict(v2) == .invalid("v2 signatures are not accepted for this program (sign with v3, which covers the partition)"))
        let accepting = RequestSignature.Policy(acceptsV2: true)
        #expect(verdict(v2, policy: accepting) == .valid(scheme: "v2"))
        #expect(verdict(v2, partition: 0, policy: accepting) == .valid(scheme: "v2"))
        #expect(verdict(v2, value: Self.value + [0x20], policy: accepting) == .invalid("the request signature does not match"))
        #expect(verdict(v2, nowMs: Self.timestampMs + 300_001, policy: accepting) != .valid(scheme: "v2"))
    }
}
