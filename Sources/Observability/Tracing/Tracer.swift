/// Which traces the worker records spans for, and where the spans go.
///
/// Sampling is decided by the trace id alone (`TraceContext.samplingValue` against the ratio), so
/// every span of one request, and every worker that handles the trace, decides alike. `record`
/// may be called from any thread and never blocks (`SpanExporter.record`).
public final class Tracer: Sendable {
    private let threshold: UInt64?
    private let sink: @Sendable (Span) -> Void

    /// A tracer that keeps `ratio` (0...1) of the traces and hands their spans to `sink`.
    public init(ratio: Double, sink: @escaping @Sendable (Span) -> Void) {
        if ratio <= 0 {
            threshold = nil
        } else if ratio >= 1 {
            threshold = .max
        } else {
            threshold = UInt64(ratio * 18_446_744_073_709_551_616.0)
        }
        self.sink = sink
    }

    /// A tracer that keeps `ratio` of the traces and exports their spans through `exporter`.
    public convenience init(ratio: Double, exporter: SpanExporter) {
        self.init(ratio: ratio) { exporter.record($0) }
    }

    /// Whether spans of `context`'s trace are recorded.
    public func samples(_ context: TraceContext) -> Bool {
        guard let threshold else { return false }
        return context.samplingValue <= threshold
    }

    /// Records `span` when its trace is sampled.
    public func record(_ span: Span) {
        if samples(span.context) { sink(span) }
    }
}
