/// One request for `HTTPClient`: method, URL, headers, body and the time it may take.
public struct HTTPClientRequest: Sendable {
    /// The method, e.g. `GET` or `POST`. Any token is allowed; `HEAD` asks for no body.
    public var method: String
    /// The absolute `http://` or `https://` URL.
    public var url: String
    /// Header fields to send. `Content-Length` and `Transfer-Encoding` are set by the client and
    /// may not be given here; a header with an empty value is sent empty.
    public var headers: [HTTPHeader]
    /// The request body; empty for none.
    public var body: [UInt8]
    /// The whole exchange (queueing, connect, TLS, send, wait, receive) must finish within this many
    /// milliseconds. The caller computes it from its deadline; zero or less fails at once with
    /// `.timedOut` and `requestMayHaveBeenSent == false`.
    public var timeoutMs: Int
    /// The largest response body accepted; a larger one aborts the transfer with `.responseTooLarge`.
    public var maxResponseBytes: Int

    /// Creates a request; `maxResponseBytes` defaults to 1 MiB.
    public init(method: String, url: String, headers: [HTTPHeader] = [], body: [UInt8] = [],
                timeoutMs: Int, maxResponseBytes: Int = 1 << 20) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeoutMs = timeoutMs
        self.maxResponseBytes = maxResponseBytes
    }
}
