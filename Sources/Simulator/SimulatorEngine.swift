import Contract
import Dispatch
import HTTP
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The simulator's shared machinery: state, credentials, handshake checks, payloads, delayed
/// answers, and the router that hands each request to its issuer API.
final class SimulatorEngine: Sendable {
    let state: Mutex<SimulatorState>
    let payloads: PayloadFactory
    let chainVerifier = CertificateChainVerifier(capacity: 8192)
    /// Signs Worldpay action links.
    let linkKey = Crypto.randomBytes(32)
    /// The port the server listens on (for links when a request has no Host header).
    let port: Mutex<UInt16> = Mutex(0)

    init(profile: SimulatorProfile) {
        state = Mutex(SimulatorState(profile: profile))
        payloads = PayloadFactory(encryptor: ApplePassEncryptor())
    }

    /// Wall-clock time in epoch milliseconds (the DCS timestamp window is checked against it).
    static func nowMs() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
    }

    // MARK: - Routing

    func handle(_ request: HTTPServerRequest, responder: HTTPResponder) {
        let segments = request.path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        guard let prefix = segments.first else {
            responder.respond(.text(404, "no such endpoint; the simulator serves /imprint, /dcs, /gnosis, /worldpay and /_sim"))
            return
        }
        let rest = Array(segments.dropFirst())
        if prefix != "_sim" {
            let line = ReceivedTrace(issuer: prefix, method: request.method, traceparent: request.header("traceparent"), atMs: Self.nowMs())
            state.withLock { $0.recordTrace(line) }
        }
        switch prefix {
        case "imprint": ImprintAPI(engine: self).route(request, rest, responder)
        case "dcs": DCSAPI(engine: self).route(request, rest, responder)
        case "gnosis": GnosisAPI(engine: self).route(request, rest, responder)
        case "worldpay": WorldpayAPI(engine: self).route(request, rest, responder)
        case "_sim": ControlAPI(engine: self).route(request, rest, responder)
        default:
            responder.respond(.text(404, "no such endpoint; the simulator serves /imprint, /dcs, /gnosis, /worldpay and /_sim"))
        }
    }

    static func notFound(_ responder: HTTPResponder) {
        responder.respond(.text(404, "no such endpoint"))
    }

    static func methodNotAllowed(_ allowed: String, _ responder: HTTPResponder) {
        responder.respond(HTTPServerResponse(status: 405, headers: [HTTPHeader(name: "Allow", value: allowed),
                                                                   HTTPHeader(name: "Content-Type", value: "text/plain; charset=utf-8")],
                                             body: Array("use \(allowed) on this endpoint".utf8)))
    }

    // MARK: - Answers

    /// Answers now, or after `delayMs` from a timer (no thread waits meanwhile).
    func send(_ response: HTTPServerResponse, after delayMs: Int, _ responder: HTTPResponder) {
        guard delayMs > 0 else {
            responder.respond(response)
            return
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(delayMs)) {
            responder.respond(response)
        }
    }

    static func json(_ status: Int, _ value: JSONValue, headers: [HTTPHeader] = []) -> HTTPServerResponse {
        var response = HTTPServerResponse.json(status, JSONWriter.encode(value))
        response.headers.append(contentsOf: headers)
        return response
    }

    static func retryAfter(_ seconds: Int) -> [HTTPHeader] {
        [HTTPHeader(name: "Retry-After", value: String(seconds))]
    }

    /// 504 with no body.
    static let gatewayTimeout = HTTPServerResponse(status: 504)

    // MARK: - Credentials and calls

    /// The program whose bearer credential the request carries (`Authorization: Bearer <key>`, or
    /// the program's own header name, where a bare key is accepted too).
    func bearerProgram(_ issuer: IssuerKind, _ request: HTTPServerRequest) -> SimulatorProgram? {
        state.withLock { state in
            for headerName in state.authHeaders[issuer] ?? [] {
                guard let value = request.header(headerName) else { continue }
                var key = value
                if value.hasPrefix("Bearer ") {
                    key = String(value.dropFirst(7))
                } else if headerName.lowercased() == "authorization" {
                    continue
                }
                if let program = state.program(issuer: issuer, apiKey: key),
                   program.authHeader.lowercased() == headerName.lowercased() {
                    return program
                }
            }
            return nil
        }
    }

    /// Counts a call in the `/_sim/calls` log; `handshake` is computed only while the log is on.
    func record(_ issuer: IssuerKind, cardID: String, handshake: () -> String) {
        guard state.withLock({ $0.profile.recordCalls }) else { return }
        let key = handshake()
        let atMs = Self.nowMs()
        state.withLock { $0.record(issuer: issuer, cardID: cardID, handshake: key, atMs: atMs) }
    }

    /// Decides the provisioning `call` now, under the state's lock: its outcome, the delay before
    /// the answer, how many Apple payloads share one ephemeral key (the profile's), and the time
    /// it was decided at.
    func decide(_ call: ProvisioningCall) -> (outcome: ProvisioningOutcome, delayMs: Int, reuse: Int, nowMs: Int64) {
        let nowMs = Self.nowMs()
        return state.withLock { state in
            let decision = state.decide(call, nowMs: nowMs)
            return (decision.0, decision.delayMs, state.profile.appleEphemeralKeyReuse, nowMs)
        }
    }

    func delay(for magic: MagicBehaviour, issuer: IssuerKind) -> Int {
        state.withLock { $0.delay(for: magic, issuer: issuer) }
    }

    // MARK: - Handshakes

    /// Checks a PassKit handshake like the issuers do: two strict-base64 DER certificates, the leaf
    /// issued and signed by the intermediate and carrying a P-256 key, and strict-base64 non-empty
    /// nonce and nonce signature. The nonce signature is not verified (issuers pass it on).
    func validateApple(certificates: [String], nonce: String, nonceSignature: String,
                       names: (certificates: String, nonce: String, nonceSignature: String)) throws(FieldProblem)
        -> ValidatedAppleHandshake {
        guard certificates.count == 2 else {
            throw FieldProblem(field: names.certificates,
                               message: "\(names.certificates) must hold 2 certificates (leaf, intermediate), found \(certificates.count)")
        }
        var der: [[UInt8]] = []
        for (index, text) in certificates.enumerated() {
            guard let bytes = Crypto.base64Decode(text), !bytes.isEmpty else {
                throw FieldProblem(field: "\(names.certificates)[\(index)]",
                                   message: "\(names.certificates)[\(index)] must be base64 of a DER certificate")
            }
            der.append(bytes)
        }
        if case .invalid(let field, _) = chainVerifier.verify(leaf: der[0], intermediate: der[1]) {
            let index = field.hasSuffix("[0]") ? "[0]" : field.hasSuffix("[1]") ? "[1]" : ""
            throw FieldProblem(field: names.certificates + index,
                               message: "\(names.certificates)\(index) is not a valid PassKit chain: send the DER leaf, then the "
                                   + "intermediate that issued and signed it (not a root), unmodified")
        }
        guard let leaf = payloads.encryptor.inspect(leafDER: der[0]) else {
            throw FieldProblem(field: "\(names.certificates)[0]", message: "\(names.certificates)[0] must carry a P-256 public key")
        }
        guard let nonceBytes = Crypto.base64Decode(nonce), !nonceBytes.isEmpty else {
            throw FieldProblem(field: names.nonce, message: "\(names.nonce) must be non-empty base64")
        }
        guard let signatureBytes = Crypto.base64Decode(nonceSignature), !signatureBytes.isEmpty else {
            throw FieldProblem(field: names.nonceSignature, message: "\(names.nonceSignature) must be non-empty base64")
        }
        return ValidatedAppleHandshake(leaf: leaf, nonce: nonce, nonceBytes: nonceBytes, nonceSignature: nonceSignature,
                                       nonceSignatureBytes: signatureBytes, nonceDigest: DigestKey(Crypto.sha256(nonceBytes)))
    }

    /// SHA-256 hex of a Google device id: the `device_ref` of a Google token.
    static func googleDeviceRef(_ deviceID: String) -> String {
        Crypto.hex(Crypto.sha256(utf8: deviceID))
    }

    // MARK: - Worldpay links

    /// An opaque link token for a payment: base64url of `{"k":id,"linkVersion":"3.0.0"}`, a dot,
    /// and base64url of an HMAC-SHA256 of the id under this simulator's random link key (URL-path safe).
    func linkToken(paymentID: String) -> String {
        let header = Crypto.base64URLEncode(Array("{\"k\":\"\(paymentID)\",\"linkVersion\":\"3.0.0\"}".utf8))
        return header + "." + Crypto.base64URLEncode(Crypto.hmacSHA256(key: linkKey, data: Array(paymentID.utf8)))
    }

    /// The payment id inside a link token, when its signature verifies.
    func paymentID(fromLinkToken token: String) -> String? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, let header = Crypto.base64URLDecode(String(parts[0])),
              let document = try? JSONParser(maxDepth: 4, maxBytes: 4096).parse(header),
              let id = document["k"]?.stringValue,
              let signature = Crypto.base64URLDecode(String(parts[1]))
        else { return nil }
        guard Crypto.constantTimeEquals(signature, Crypto.hmacSHA256(key: linkKey, data: Array(id.utf8))) else { return nil }
        return id
    }

    /// `http://<Host>` of the request (or of the bound loopback port).
    func baseURL(_ request: HTTPServerRequest) -> String {
        if let host = request.header("Host"), !host.isEmpty { return "http://" + host }
        return "http://127.0.0.1:\(port.withLock { $0 })"
    }
}
