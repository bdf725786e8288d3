/// An answer for `HTTPResponder.respond`.
public struct HTTPServerResponse: Sendable {
    /// The status code.
    public var status: Int
    /// Header fields. `Content-Length`, `Date` and `Connection` are managed by the server and are
    /// ignored here, as is any field with a CR or LF.
    public var headers: [HTTPHeader]
    /// The body.
    public var body: [UInt8]
    /// When set, the response stays open after `body` and carries what is sent on the stream until
    /// it is closed (Server-Sent Events); `Content-Length` is not sent.
    public var stream: HTTPEventStream?

    /// Creates a response.
    public init(status: Int, headers: [HTTPHeader] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A streaming response: `body` first, then what is sent on `stream` until it is closed.
    public init(status: Int, headers: [HTTPHeader] = [], body: [UInt8] = [], stream: HTTPEventStream) {
        self.init(status: status, headers: headers, body: body)
        self.stream = stream
    }

    /// A response with `Content-Type: application/json`.
    public static func json(_ status: Int, _ body: [UInt8]) -> HTTPServerResponse {
        HTTPServerResponse(status: status, headers: [HTTPHeader(name: "Content-Type", value: "application/json")], body: body)
    }

    /// A response with `Content-Type: text/plain; charset=utf-8`.
    public static func text(_ status: Int, _ body: String) -> HTTPServerResponse {
        HTTPServerResponse(status: status, headers: [HTTPHeader(name: "Content-Type", value: "text/plain; charset=utf-8")],
                           body: Array(body.utf8))
    }
}
