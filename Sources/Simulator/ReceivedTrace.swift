import Contract

/// One line of `GET /_sim/traces`: the W3C `traceparent` an issuer request arrived with.
///
/// Every request to an issuer API is logged (calls, retries and state queries alike), with or
/// without the header, while the profile records calls; the newest `ReceivedTraces.capacity` are kept.
public struct ReceivedTrace: Sendable, Hashable {
    /// The issuer prefix: `imprint`, `dcs`, `gnosis` or `worldpay`.
    public var issuer: String
    /// The HTTP method (`POST` for calls, `GET` for state queries).
    public var method: String
    /// The `traceparent` header as received, or nil when the request had none.
    public var traceparent: String?
    /// When the request arrived (epoch ms, the simulator's clock).
    public var atMs: Int64

    /// Creates a line.
    public init(issuer: String, method: String, traceparent: String?, atMs: Int64) {
        self.issuer = issuer
        self.method = method
        self.traceparent = traceparent
        self.atMs = atMs
    }

    /// The line as JSON: `{"issuer","method","traceparent","at_ms"}` (`traceparent` null when absent).
    public var jsonValue: JSONValue {
        .object(["issuer": .string(issuer), "method": .string(method), "traceparent": traceparent.map(JSONValue.string) ?? .null,
                 "at_ms": .integer(atMs)])
    }
}

/// The newest `capacity` received trace headers, oldest first (a ring).
struct ReceivedTraces: Sendable {
    /// Lines kept at most.
    static let capacity = 100_000

    private var lines: [ReceivedTrace] = []
    private var next = 0

    /// Logs one request.
    mutating func append(_ line: ReceivedTrace) {
        if lines.count < Self.capacity {
            lines.append(line)
        } else {
            lines[next] = line
            next = (next + 1) % Self.capacity
        }
    }

    /// The lines kept, oldest first.
    var all: [ReceivedTrace] { Array(lines[next...] + lines[..<next]) }
}
