import Contract
import HTTP

/// Wire helpers the adapters share: URL escaping, JSON bodies, common headers.
enum IssuerWire {
    /// `Content-Type` and `Accept` for JSON APIs.
    static let jsonHeaders = [HTTPHeader(name: "Content-Type", value: "application/json"),
                              HTTPHeader(name: "Accept", value: "application/json")]

    /// Percent-encodes everything but RFC 3986 unreserved characters, so an id can never leave its
    /// path segment or query value (`/`, `?`, `#`, `%` and `..` tricks included).
    static func percentEncode(_ text: String) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        var output = [UInt8]()
        output.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "~"):
                output.append(byte)
            case UInt8(ascii: "."):
                // A segment of only dots would walk up the path; dots inside a name are harmless.
                if text.utf8.allSatisfy({ $0 == UInt8(ascii: ".") }) {
                    output.append(contentsOf: Array("%2E".utf8))
                } else {
                    output.append(byte)
                }
            default:
                output.append(UInt8(ascii: "%"))
                output.append(digits[Int(byte >> 4)])
                output.append(digits[Int(byte & 0x0F)])
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// The body as a JSON document, or `nil` when it is empty or not JSON.
    static func json(_ body: [UInt8]) -> JSONValue? {
        guard !body.isEmpty else { return nil }
        return try? JSONParser().parse(body)
    }

    /// Whether `status` is a 2xx success.
    static func isSuccess(_ status: Int) -> Bool { (200...299).contains(status) }

    /// The error answer for a non-success status, with the issuer's code and message when present.
    static func errorAnswer(status: Int, code: String?, message: String?) -> IssuerAnswer {
        .issuerError(httpStatus: status, issuerCode: code, message: message.map(Sensitive.init))
    }

    /// A string member, or `nil` when absent or not a string.
    static func string(_ value: JSONValue?, _ key: String) -> String? {
        value?[key]?.stringValue
    }

    /// Writes the PassKit handshake's certificates, nonce and nonce signature under the issuer's
    /// names for them (Imprint and Gnosis Pay: `certificates`, `nonce`, `nonce_signature`).
    static func writeApple(_ apple: ApplePassKitHandshake, to writer: inout JSONWriter,
                           names: (certificates: String, nonce: String, signature: String) = ("certificates", "nonce", "nonce_signature")) {
        writer.key(names.certificates)
        writer.beginArray()
        for certificate in apple.certificates { writer.string(certificate.revealed) }
        writer.endArray()
        writer.key(names.nonce)
        writer.string(apple.nonce.revealed)
        writer.key(names.signature)
        writer.string(apple.nonceSignature.revealed)
    }

    /// A JSON `POST` of `body` to `path` under `endpoint`, with its bearer credentials (Imprint,
    /// Gnosis Pay, Worldpay); each attempt sets its own timeout.
    static func bearerPost(_ path: String, body: [UInt8], to endpoint: IssuerEndpoint) -> HTTPClientRequest {
        HTTPClientRequest(method: "POST", url: endpoint.url(path), headers: jsonHeaders + [endpoint.credentials.bearerHeader],
                          body: body, timeoutMs: 0)
    }
}
