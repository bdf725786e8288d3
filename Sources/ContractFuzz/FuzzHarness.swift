import Contract

/// One fuzz iteration: decode, validate for every issuer, and check invariants that must hold for
/// any input; then every decoder of a record the worker reads back from Kafka (`RecordFuzz`). A
/// broken invariant traps, which libFuzzer reports as a crash.
enum FuzzHarness {
    static let validator = RequestValidator(policy: ValidationPolicy(requireEncryption: true),
                                            chainVerifier: CertificateChainVerifier(capacity: 256))
    static let deadlines = DeadlinePolicy()

    static func run(_ bytes: [UInt8]) {
        // A fresh nonce guard per input, and per issuer within it: a reproducer replays the same
        // way alone as it did after thousands of other inputs (a shared guard would answer
        // `nonce_reused` from their nonces), and every issuer's validation goes past the nonce
        // check (one guard for all four would stop the last three at `nonce_reused`).
        RecordFuzz.run(bytes)
        // The parser must round-trip whatever it accepts.
        if let value = try? JSONParser(maxDepth: 64, maxBytes: 64 * 1024).parse(bytes) {
            let written = JSONWriter.encode(value)
            guard let reparsed = try? JSONParser(maxDepth: 64, maxBytes: Int.max).parse(written), reparsed == value else {
                fatalError("JSONWriter output does not parse back to the same value")
            }
        }
        if let stripped = RequestRedaction.strippingAppleHandshake(bytes),
           case .decoded(let request) = RequestDecoder.decode(stripped, limits: RequestLimits(maxBytes: Int.max)),
           request.apple != nil {
            fatalError("a request stripped of its Apple handshake still decodes with one")
        }
        switch RequestDecoder.decode(bytes) {
        case .deadLetter(let cause):
            _ = AuditEvent(requestID: nil, stage: .deadLettered, atMs: 0, reason: AuditReason(cause)).encodedJSON()
        case .rejected(let rejection):
            let result = ProvisioningResult(rejection: rejection, timing: ResultTiming(receivedAtMs: 0))
            guard (try? ProvisioningResult.decode(result.encodedJSON())) == result else {
                fatalError("a rejected result does not decode back to itself")
            }
        case .decoded(let request):
            for issuer in IssuerKind.allCases {
                let nonces = NonceGuard(horizonMs: 60_000, maxEntries: 16)
                let failure = validator.validate(request, issuer: issuer, nonceGuard: nonces, nowMs: 1_000)
                let window = deadlines.window(for: request, recordTimestampMs: 0, receivedAtMs: 0)
                _ = deadlines.admit(window, nowMs: 0)
                if let failure {
                    _ = ProvisioningResult(request: request, issuer: issuer, failure: failure,
                                           timing: ResultTiming(window: window, receivedAtMs: 0)).encodedJSON()
                }
            }
            // Re-encoding a decoded request must be stable.
            let encoded = request.encodedJSON()
            guard case .decoded(let again) = RequestDecoder.decode(encoded, limits: RequestLimits(maxBytes: Int.max)),
                  again.encodedJSON() == encoded
            else {
                fatalError("a decoded request does not re-encode stably")
            }
        }
    }
}
