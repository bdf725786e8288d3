import Contract
import HTTP
import Issuers
import Observability
import Simulator
import Synchronization
import Testing

/// `IssuerClient` sends the request's trace context on every HTTP request to the issuer, as the
/// simulator received it: a `traceparent` with the trace id and flags kept and a fresh parent id
/// per send (the one retry included), which is the id of the span recorded for that send.
@Suite("IssuerClient: traceparent on every issuer request", .timeLimit(.minutes(2)))
struct TraceparentTests {
    final class Spans: Sendable {
        let list = Mutex<[Span]>([])
    }

    @Test(arguments: IssuerKind.allCases)
    func everySendCarriesAFreshChildOfTheTrace(issuer: IssuerKind) async throws {
        let fixture = try SimulatorFixture()
        let spans = Spans()
        let client = IssuerClient(http: fixture.http, clock: WallClock.nowMs, tracer: Tracer(ratio: 1) { span in spans.list.withLock { $0.append(span) } })
        let trace = try #require(TraceContext(header: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")).child()
        let card = SimulatorFixture.card("-flaky")
        let request: ProvisioningRequest = switch issuer {
        case .imprint, .gnosis: SimulatorFixture.appleRequest(try SimulatedDevice().appleHandshake(), card: card)
        case .dcs: SimulatorFixture.googleRequest(try SimulatedDevice().googleHandshake(opcRequested: false), wallet: .googleWallet, card: card,
                                                  userID: "u_1")
        case .worldpay: SimulatorFixture.paymentRequest(reference: card)
        }
        let report: IssuerCallReport = await withCheckedContinuation { continuation in
            client.provision(request, endpoint: fixture.endpoint(issuer), publishByMs: WallClock.nowMs() + 5_000, trace: trace) {
                continuation.resume(returning: $0)
            }
        }
        #expect(report.attempts == 2, "\(issuer): a flaky card is called twice")
        let received = fixture.simulator.receivedTraces.filter { $0.issuer == issuer.rawValue }.compactMap(\.traceparent)
        #expect(received.count == 2, "\(issuer): both sends carry traceparent: \(received)")
        let recorded = spans.list.withLock { $0 }
        for header in received {
            let sent = try #require(TraceContext(header: header))
            #expect(sent.traceID == trace.traceID && sent.flags == "01")
            #expect(sent.spanID != trace.spanID, "\(issuer): the issuer gets a child span id, not the request's")
            let span = recorded.first { $0.context.spanID == sent.spanID }
            #expect(span?.context.parentSpanID == trace.spanID && span?.name == "issuer call" && span?.kind == .client,
                    "\(issuer): the span recorded for the send has the id the issuer received, under the request's span")
            #expect(span?.attributes.contains { $0.0 == "url" } == false)
        }
        #expect(Set(received).count == 2, "\(issuer): each send has its own span id")
    }

    @Test func withoutATraceNothingIsAdded() async throws {
        let fixture = try SimulatorFixture()
        let request = SimulatorFixture.appleRequest(try SimulatedDevice().appleHandshake(), card: SimulatorFixture.card())
        let report: IssuerCallReport = await withCheckedContinuation { continuation in
            fixture.client.provision(request,
                                     endpoint: fixture.endpoint(.imprint), publishByMs: WallClock.nowMs() + 5_000) {
                continuation.resume(returning: $0)
            }
        }
        #expect(report.outcome.status == .provisioned)
        let received = fixture.simulator.receivedTraces
        #expect(received.count == 1 && received.first?.traceparent == nil, "\(received)")
    }
}
