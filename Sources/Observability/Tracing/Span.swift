/// One finished span as the worker exports it (OTLP's `Span`, reduced to what the worker records).
///
/// Attributes are string-valued and must never hold a secret or a raw identifier of a card,
/// wallet or device (docs/SECURITY.md): program, request id, issuer, status, code and the like.
public struct Span: Sendable {
    /// OTLP's span kinds the worker uses.
    public enum Kind: Int, Sendable {
        /// Work inside the worker (queue wait, fencing, publish).
        case `internal` = 1
        /// An outgoing call (the issuer's HTTP).
        case client = 3
        /// A message taken from a queue (the request as a whole, from its record).
        case consumer = 5
    }

    /// The span's trace, id and parent.
    public var context: TraceContext
    /// What the span covers (`provisioning request`, `issuer call`, ...).
    public var name: String
    /// Its kind.
    public var kind: Kind
    /// Start and end, wall clock in epoch milliseconds.
    public var startMs: Int64
    /// The end (not before the start).
    public var endMs: Int64
    /// Attributes as key and string value, in order.
    public var attributes: [(String, String)]
    /// An error status (OTLP `STATUS_CODE_ERROR`) with its message, or nil (unset).
    public var error: String?

    /// Creates a span; an end before the start is clamped to the start.
    public init(context: TraceContext, name: String, kind: Kind, startMs: Int64, endMs: Int64,
                attributes: [(String, String)] = [], error: String? = nil) {
        self.context = context
        self.name = name
        self.kind = kind
        self.startMs = startMs
        self.endMs = max(startMs, endMs)
        self.attributes = attributes
        self.error = error
    }

    /// The OTLP/JSON body (`ExportTraceServiceRequest`) of `spans` from the service `serviceName`
    /// (`service.instance.id` = `instance`): one resource, one scope, ids in hex, times as decimal
    /// strings of nanoseconds.
    public static func otlpJSON(_ spans: [Span], serviceName: String, instance: String) -> [UInt8] {
        var out = "{\"resourceSpans\":[{\"resource\":{\"attributes\":["
        appendAttribute("service.name", serviceName, to: &out)
        out.append(",")
        appendAttribute("service.instance.id", instance, to: &out)
        out.append("]},\"scopeSpans\":[{\"scope\":{\"name\":\"provisioner\"},\"spans\":[")
        for (index, span) in spans.enumerated() {
            if index > 0 { out.append(",") }
            span.appendJSON(to: &out)
        }
        out.append("]}]}]}")
        return Array(out.utf8)
    }

    private func appendJSON(to out: inout String) {
        out.append("{\"traceId\":\"\(context.traceID)\",\"spanId\":\"\(context.spanID)\"")
        if let parent = context.parentSpanID { out.append(",\"parentSpanId\":\"\(parent)\"") }
        out.append(",\"name\":")
        JSONText.appendQuoted(name, to: &out)
        out.append(",\"kind\":\(kind.rawValue),\"startTimeUnixNano\":\"\(startMs * 1_000_000)\",\"endTimeUnixNano\":\"\(endMs * 1_000_000)\"")
        out.append(",\"attributes\":[")
        for (index, attribute) in attributes.enumerated() {
            if index > 0 { out.append(",") }
            Self.appendAttribute(attribute.0, attribute.1, to: &out)
        }
        out.append("]")
        if let error {
            out.append(",\"status\":{\"code\":2,\"message\":")
            JSONText.appendQuoted(error, to: &out)
            out.append("}")
        }
        out.append("}")
    }

    private static func appendAttribute(_ key: String, _ value: String, to out: inout String) {
        out.append("{\"key\":")
        JSONText.appendQuoted(key, to: &out)
        out.append(",\"value\":{\"stringValue\":")
        JSONText.appendQuoted(value, to: &out)
        out.append("}}")
    }
}
