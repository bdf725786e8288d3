/// A complete request as the server received it (body fully read).
public struct HTTPServerRequest: Sendable {
    /// The method as sent, e.g. `GET`.
    public var method: String
    /// The path without the query string, percent-decoded.
    public var path: String
    /// Query arguments, percent-decoded; for a repeated name the first value wins, and a name
    /// without `=` maps to an empty string.
    public var query: [String: String]
    /// Header fields in the order received.
    public var headers: [HTTPHeader]
    /// The request body.
    public var body: [UInt8]
    /// The TCP peer's address as numeric text (a proxy's, behind one); nil when not known.
    public var peer: String?

    /// Creates a request.
    public init(method: String, path: String, query: [String: String] = [:], headers: [HTTPHeader] = [], body: [UInt8] = [],
                peer: String? = nil) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.peer = peer
    }

    /// The value of the first header named `name`, compared without regard to ASCII case.
    public func header(_ name: String) -> String? {
        headers.firstValue(named: name)
    }
}
