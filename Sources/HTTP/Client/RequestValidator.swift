/// Checks what libcurl would send verbatim: method token, header names and values.
enum RequestValidator {
    /// A description of what is wrong with `request`, or nil when it can be sent.
    static func problem(in request: HTTPClientRequest) -> String? {
        guard isToken(request.method) else {
            return "the method '\(request.method.prefix(32))' is not an HTTP token; use e.g. GET or POST"
        }
        guard !request.url.isEmpty else { return "the URL is empty; give an absolute http:// or https:// URL" }
        guard request.maxResponseBytes >= 0 else { return "maxResponseBytes is negative; give 0 or more" }
        for header in request.headers {
            guard isToken(header.name) else {
                return "the header name '\(header.name.prefix(64))' is not an HTTP token; remove spaces, colons and control characters"
            }
            guard !header.value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) else {
                return "the value of header '\(header.name)' contains CR, LF or NUL; remove them"
            }
            if header.hasName("Content-Length") || header.hasName("Transfer-Encoding") {
                return "the header '\(header.name)' is set by the client from the body; remove it"
            }
        }
        return nil
    }

    /// RFC 9110 token: one or more of `!#$%&'*+-.^_`|~`, digits and ASCII letters.
    private static func isToken(_ text: String) -> Bool {
        guard !text.isEmpty else { return false }
        return text.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                return true
            default:
                return "!#$%&'*+-.^_`|~".utf8.contains(byte)
            }
        }
    }
}
