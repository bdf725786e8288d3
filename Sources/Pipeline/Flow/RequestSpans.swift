import Contract
import Observability

/// The spans of an admitted request, recorded when tracing is on (`WorkerContext.tracer`) and
/// the request's W3C trace is sampled; with tracing off each method returns at its first check.
///
/// The request's own span (`job.trace`, a child of its `traceparent`) covers intake to the
/// result's acknowledgement; under it: `queue wait` (intake to the `started` marker), `fencing`
/// (the marker's write and its confirmation, to the call), the issuer calls (`IssuerClient`,
/// whose span ids the issuer receives) and `publish` (the decision and the result's write, to its
/// acknowledgement). Attributes name the program, request id, issuer, wallet and kind, and the
/// request span the status and code: never a card, user, wallet or device id (docs/SECURITY.md).
extension RequestFlow {
    /// The queue wait ended at `untilMs` (the call's `started` marker was stamped).
    func traceQueueWait(_ job: ProvisioningJob, untilMs: Int64) {
        guard let tracer = context.tracer, let trace = job.trace, tracer.samples(trace) else { return }
        tracer.record(Span(context: trace.child(), name: "queue wait", kind: .internal, startMs: job.origin.receivedAtMs, endMs: untilMs,
                           attributes: Self.spanAttributes(job)))
    }

    /// Fencing ended: the call starts now.
    func traceFencing(_ job: ProvisioningJob) {
        guard let tracer = context.tracer, let trace = job.trace, tracer.samples(trace), let startMs = job.startedAtMs else { return }
        tracer.record(Span(context: trace.child(), name: "fencing", kind: .internal, startMs: startMs, endMs: context.clock(),
                           attributes: Self.spanAttributes(job)))
    }

    /// The result was acknowledged at `nowMs`: the publish span (from the result's stamp) and
    /// the request's own span end.
    func traceAnswered(_ job: ProvisioningJob, result: ProvisioningResult, nowMs: Int64) {
        guard let tracer = context.tracer, let trace = job.trace, tracer.samples(trace) else { return }
        let attributes = Self.spanAttributes(job)
        if let publishStartMs = result.timing.publishedAtMs {
            tracer.record(Span(context: trace.child(), name: "publish", kind: .internal, startMs: publishStartMs, endMs: nowMs,
                               attributes: attributes))
        }
        var outcome = attributes + [("status", result.status.rawValue)]
        if let code = result.code { outcome.append(("code", code.rawValue)) }
        tracer.record(Span(context: trace, name: "provisioning request", kind: .consumer, startMs: job.origin.receivedAtMs, endMs: nowMs,
                           attributes: outcome))
    }

    private static func spanAttributes(_ job: ProvisioningJob) -> [(String, String)] {
        [("program", job.request.program), ("request_id", job.request.requestID), ("issuer", job.program.issuer.rawValue),
         ("wallet", job.request.wallet.rawValue), ("kind", job.request.kind.rawValue)]
    }
}
