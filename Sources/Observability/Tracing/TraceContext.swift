/// A W3C trace context (`traceparent`, version 00): the trace, this span, its parent, the flags.
///
/// Read from a request's `traceparent` header (`init?(header:)`: that header's parent id becomes
/// `spanID`), then `child()` for each span the worker opens under it; `header` is the value sent
/// downstream, naming this context's span as the parent.
public struct TraceContext: Sendable, Equatable {
    /// The trace id: 32 lower-case hex digits, not all zero.
    public let traceID: String
    /// This span's id: 16 lower-case hex digits, not all zero.
    public let spanID: String
    /// The span this one is a child of (nil for a context read from a header).
    public let parentSpanID: String?
    /// The trace flags: 2 lower-case hex digits (`01`: sampled upstream), kept as received.
    public let flags: String

    /// Reads a `traceparent` value `00-<trace id>-<parent id>-<flags>`; nil when it is not one
    /// (another version, upper-case hex, an all-zero id).
    public init?(header: String) {
        let parts = header.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "00", Self.isID(parts[1], length: 32), Self.isID(parts[2], length: 16),
              parts[3].utf8.count == 2, parts[3].utf8.allSatisfy(Self.isHexDigit) else { return nil }
        self.init(traceID: String(parts[1]), spanID: String(parts[2]), parentSpanID: nil, flags: String(parts[3]))
    }

    /// A context with every field given (checked by the caller).
    public init(traceID: String, spanID: String, parentSpanID: String?, flags: String) {
        self.traceID = traceID
        self.spanID = spanID
        self.parentSpanID = parentSpanID
        self.flags = flags
    }

    /// A new span under this one: the same trace and flags, a fresh random span id.
    public func child() -> TraceContext {
        TraceContext(traceID: traceID, spanID: Self.randomSpanID(), parentSpanID: spanID, flags: flags)
    }

    /// The `traceparent` value naming this span as the parent of what it is sent with.
    public var header: String { "00-\(traceID)-\(spanID)-\(flags)" }

    /// The low 64 bits of the trace id (its last 16 hex digits): what sampling decides on, the
    /// same in every process that sees the trace.
    public var samplingValue: UInt64 { UInt64(traceID.suffix(16), radix: 16) ?? 0 }

    /// A random, non-zero 8-byte span id as 16 lower-case hex digits.
    public static func randomSpanID() -> String {
        let text = String(UInt64.random(in: 1...UInt64.max), radix: 16)
        return String(repeating: "0", count: 16 - text.utf8.count) + text
    }

    private static func isID(_ text: Substring, length: Int) -> Bool {
        text.utf8.count == length && text.utf8.allSatisfy(isHexDigit) && text.utf8.contains { $0 != UInt8(ascii: "0") }
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
    }
}
