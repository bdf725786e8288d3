/// A complete HTTP answer: any status (4xx and 5xx included), headers, body and time taken.
public struct HTTPClientResponse: Sendable {
    /// The status code of the final response (1xx interim responses are skipped).
    public var status: Int
    /// The header fields of the final response, in the order received.
    public var headers: [HTTPHeader]
    /// The response body.
    public var body: [UInt8]
    /// Milliseconds from `execute` to the complete answer, queueing included.
    public var elapsedMs: Double

    /// Creates a response.
    public init(status: Int, headers: [HTTPHeader], body: [UInt8], elapsedMs: Double) {
        self.status = status
        self.headers = headers
        self.body = body
        self.elapsedMs = elapsedMs
    }

    /// The value of the first header named `name`, compared without regard to ASCII case.
    public func header(_ name: String) -> String? {
        headers.firstValue(named: name)
    }
}
