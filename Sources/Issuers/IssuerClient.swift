import Contract
import Dispatch
import HTTP
import Observability

/// Runs issuer calls against each request's deadline: builds the exchange with the endpoint's
/// adapter, sets every attempt's timeout from the time left, retries at most once and only when
/// the issuer provably did not process the request, and maps the answer through `OutcomeTable`.
///
/// Every method returns at once; `completion` runs exactly once, on the HTTP client's event thread
/// or a timer thread: keep it short and never block in it.
public final class IssuerClient: Sendable {
    /// Every call, retry and state query goes out through it.
    private let http: TracedHTTP
    private let clock: @Sendable () -> Int64
    private let logger: Logger?
    /// Runs work after a delay in milliseconds (the one retry's `Retry-After` wait).
    private let after: @Sendable (Int64, @escaping @Sendable () -> Void) -> Void

    /// How long before `publishBy` an attempt's timeout ends, so that the completion (libcurl's
    /// timer resolution, the hop to the completion) lands by `publishBy`, not just after it.
    public static let completionMarginMs: Int64 = 5

    /// Creates a client over `http`; `clock` reads wall time in epoch milliseconds (deadlines,
    /// DCS timestamps, `Retry-After` dates). `logger` receives retry decisions (never a secret).
    /// `after` runs a retry after its wait (a Dispatch timer unless a simulation supplies its own).
    /// `tracer` records a span for each send of a sampled trace (`TracedHTTP`).
    public init(http: any HTTPExchanging, clock: @escaping @Sendable () -> Int64, logger: Logger? = nil, tracer: Tracer? = nil,
                after: @escaping @Sendable (Int64, @escaping @Sendable () -> Void) -> Void = { delayMs, work in
                    DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(delayMs)), execute: work)
                }) {
        self.http = TracedHTTP(http: http, tracer: tracer, clock: clock)
        self.clock = clock
        self.logger = logger
        self.after = after
    }

    // MARK: Calls

    /// Builds the call for a validated `request` without sending anything: a provisioning (or,
    /// at Worldpay, a payment authorization) through the endpoint's adapter, or a Worldpay payment
    /// action through its link. Only a link with the scheme, host and port of `endpoint.baseURL`
    /// is accepted; a request that cannot become a call throws, so it can be rejected before any
    /// call marker or audit event says a call started.
    public static func prepare(_ request: ProvisioningRequest, endpoint: IssuerEndpoint) throws(IssuerRequestError) -> PreparedCall {
        guard request.kind == .paymentAction else {
            let adapter = endpoint.adapter
            let base = try adapter.makeRequest(for: request)
            return PreparedCall(endpoint: endpoint, wallet: request.wallet, kind: request.kind,
                                makeSend: { nowMs in adapter.prepareForSending(base, nowMs: nowMs) },
                                interpret: { response in adapter.answer(for: response, to: request) })
        }
        guard let action = request.paymentAction else {
            throw IssuerRequestError(code: .invalidRequest, message: "payment_action is required for kind payment_action")
        }
        return try prepare(action, endpoint: endpoint)
    }

    /// Builds a settle, partial settle or cancel of an authorized Worldpay payment through the
    /// link from its authorization, without sending it (see `prepare(_:endpoint:)`).
    public static func prepare(_ action: PaymentActionInstruction, endpoint: IssuerEndpoint) throws(IssuerRequestError) -> PreparedCall {
        guard endpoint.kind == .worldpay else {
            throw IssuerRequestError(code: .kindUnsupported, message: "payment actions go to Worldpay programs; \(endpoint.kind.rawValue) takes none")
        }
        let adapter = WorldpayAdapter(endpoint: endpoint)
        let base = try adapter.makeActionRequest(for: action)
        return PreparedCall(endpoint: endpoint, wallet: .applePay, kind: .paymentAction,
                            makeSend: { nowMs in adapter.prepareForSending(base, nowMs: nowMs) },
                            interpret: { response in adapter.actionAnswer(for: response, action: action.action) },
                            binding: adapter.linkBinding(for: action))
    }

    /// Sends a prepared call against the request's deadline.
    ///
    /// Each attempt's timeout is `min(endpoint.timeoutMs, publishByMs − now − completionMarginMs)`.
    /// With less than `endpoint.minimumBudgetMs` left before the first send, nothing is sent and
    /// the answer is `abandonedBeforeSend` (status `expired`). One retry follows only a failure the issuer
    /// provably did not process (TCP connect failed; 503, 429 or DCS `SYS_BUSY` answered) and only
    /// when the minimum budget is still left after any `Retry-After` wait; never after a send
    /// whose fate is unknown. `trace`: the span the call belongs to; each send carries a
    /// `traceparent` naming a new child of it (`send`).
    ///
    /// A payment action first asks Worldpay for the authorization its request names
    /// (`PaymentLinkBinding`): a link of another payment is answered `rejected` and never sent; a
    /// query without a usable answer ends the call as not sent.
    public func call(_ prepared: PreparedCall, publishByMs: Int64, trace: TraceContext? = nil,
                     completion: @escaping @Sendable (IssuerCallReport) -> Void) {
        let exchange = prepared.exchange(publishByMs: publishByMs, trace: trace)
        guard let binding = prepared.binding else {
            return attempt(exchange, progress: ExchangeProgress(), completion: completion)
        }
        let endpoint = exchange.endpoint
        let nowMs = clock()
        let remaining = publishByMs - nowMs
        guard remaining >= endpoint.minimumBudgetMs else {
            return completion(exchange.report(.transportFailure(.abandonedBeforeSend), progress: ExchangeProgress()))
        }
        var query = endpoint.adapter.prepareForSending(binding.query, nowMs: nowMs)
        query.timeoutMs = Int(max(1, min(endpoint.timeoutMs, remaining - Self.completionMarginMs)))
        http.send(query, trace: trace, span: "payment link check", endpoint: endpoint) { [self] result in
            let verdict: PaymentLinkBinding.Verdict = switch result {
            case .success(let response): binding.verdict(for: response)
            case .failure: .unknown
            }
            switch verdict {
            case .bound:
                attempt(exchange, progress: ExchangeProgress(), completion: completion)
            case .refused(let message):
                completion(IssuerCallReport(rejected: IssuerRequestError(code: .invalidRequest, message: message)))
            case .unknown:
                completion(exchange.report(.transportFailure(.notSent), progress: ExchangeProgress()))
            }
        }
    }

    /// Prepares and sends in one step (`prepare`, then `call`); a request that cannot become a
    /// call is answered with its rejection and nothing is sent.
    public func provision(_ request: ProvisioningRequest, endpoint: IssuerEndpoint, publishByMs: Int64, trace: TraceContext? = nil,
                          completion: @escaping @Sendable (IssuerCallReport) -> Void) {
        do {
            call(try Self.prepare(request, endpoint: endpoint), publishByMs: publishByMs, trace: trace, completion: completion)
        } catch {
            completion(IssuerCallReport(rejected: error))
        }
    }

    /// Prepares and sends a Worldpay payment action in one step (see `provision`).
    public func paymentAction(_ action: PaymentActionInstruction, endpoint: IssuerEndpoint, publishByMs: Int64,
                              completion: @escaping @Sendable (IssuerCallReport) -> Void) {
        do {
            call(try Self.prepare(action, endpoint: endpoint), publishByMs: publishByMs, completion: completion)
        } catch {
            completion(IssuerCallReport(rejected: error))
        }
    }

    /// Asks the issuer whether an indeterminate call was applied: Imprint's wallet tokens,
    /// Worldpay's payment events; `noStateAPI` at once for DCS and Gnosis Pay. One attempt, timed
    /// like a call; any failure of the query itself is `unknown` (ask again at the next tier).
    /// `trace`: the request's trace context, sent as a `traceparent` naming a new child span.
    public func reconcile(_ query: ReconcileQuery, endpoint: IssuerEndpoint, publishByMs: Int64, trace: TraceContext? = nil,
                          completion: @escaping @Sendable (ReconcileAnswer) -> Void) {
        let adapter = endpoint.adapter
        guard let base = adapter.makeStateQuery(for: query) else {
            completion(.noStateAPI)
            return
        }
        let nowMs = clock()
        let remaining = publishByMs - nowMs
        guard remaining >= endpoint.minimumBudgetMs else {
            completion(.unknown(reason: "\(remaining) ms left, below the program's minimum budget of "
                + "\(endpoint.minimumBudgetMs) ms; the state query was not sent"))
            return
        }
        var request = adapter.prepareForSending(base, nowMs: nowMs)
        request.timeoutMs = Int(max(1, min(endpoint.timeoutMs, remaining - Self.completionMarginMs)))
        http.send(request, trace: trace, span: "issuer state query", endpoint: endpoint) { result in
            switch result {
            case .success(let response):
                completion(adapter.reconcileAnswer(for: response, to: query))
            case .failure(let error):
                completion(.unknown(reason: "the state query got no answer (\(error.kind), request "
                    + (error.requestMayHaveBeenSent ? "may have been sent" : "not sent") + ")"))
            }
        }
    }

    // MARK: Attempts

    private func attempt(_ exchange: IssuerExchange, progress: ExchangeProgress,
                         completion: @escaping @Sendable (IssuerCallReport) -> Void) {
        let endpoint = exchange.endpoint
        let nowMs = clock()
        let remaining = exchange.publishByMs - nowMs
        guard remaining >= endpoint.minimumBudgetMs else {
            if progress.attempts > 0, let answer = progress.lastAnswer {
                // A retry whose wait overran the budget: the first answer stands.
                completion(exchange.report(answer, progress: progress))
            } else {
                completion(exchange.report(.transportFailure(.abandonedBeforeSend), progress: progress))
            }
            return
        }
        let budgetMs = remaining - Self.completionMarginMs
        let deadlineBound = budgetMs <= endpoint.timeoutMs
        var request = exchange.makeSend(nowMs)
        request.timeoutMs = Int(max(1, min(endpoint.timeoutMs, budgetMs)))
        http.send(request, trace: exchange.trace, span: "issuer call", endpoint: endpoint) { [self] result in
            var progress = progress
            progress.attempts += 1
            let answer: IssuerAnswer
            var retryAfter: String?
            var transportError: HTTPTransportError?
            switch result {
            case .success(let response):
                progress.issuerMs += response.elapsedMs
                progress.mayHaveBeenSent = true
                progress.lastStatus = response.status
                answer = exchange.interpret(response)
                retryAfter = response.header("Retry-After")
            case .failure(let error):
                progress.issuerMs += error.elapsedMs
                progress.mayHaveBeenSent = progress.mayHaveBeenSent || error.requestMayHaveBeenSent
                answer = .transportFailure(Self.transportFailure(for: error, deadlineBound: deadlineBound))
                transportError = error
            }
            progress.lastAnswer = answer
            guard progress.attempts == 1,
                  let delayMs = retryDelay(exchange, answer: answer, transportError: transportError, retryAfter: retryAfter)
            else {
                completion(exchange.report(answer, progress: progress))
                return
            }
            logger?.info("issuer call retried", [("program", .string(endpoint.program)), ("issuer", .string(endpoint.kind.rawValue)),
                                                 ("after", .string(Self.retryReason(answer))), ("delay_ms", .integer(delayMs))])
            let settled = progress
            if delayMs <= 0 {
                attempt(exchange, progress: settled, completion: completion)
            } else {
                after(delayMs) { [self] in
                    attempt(exchange, progress: settled, completion: completion)
                }
            }
        }
    }

    /// The wait before the one retry, or `nil` when the answer allows none.
    ///
    /// The issuer must provably not have processed the request: a connect failure (nothing left),
    /// or an answer the issuer gave without processing: HTTP 503 or 429 (whatever the envelope
    /// code, e.g. DCS's 503 `SYS_ERROR`), or an outcome row retryable only-if-not-sent (DCS
    /// `SYS_BUSY`). After the `Retry-After` wait at least the minimum budget must be left.
    private func retryDelay(_ exchange: IssuerExchange, answer: IssuerAnswer, transportError: HTTPTransportError?,
                            retryAfter: String?) -> Int64? {
        if let transportError {
            guard !transportError.requestMayHaveBeenSent, transportError.kind == .connectFailed else { return nil }
        } else {
            var unprocessed = exchange.outcome(for: answer).retry == .ifNotSent
            if case .issuerError(let status, _, _) = answer, status == 503 || status == 429 { unprocessed = true }
            guard unprocessed else { return nil }
        }
        let nowMs = clock()
        var delayMs: Int64 = 0
        if let retryAfter {
            guard let wait = RetryAfter.milliseconds(retryAfter, nowMs: nowMs) else { return nil }
            delayMs = wait
        }
        guard exchange.publishByMs - (nowMs + delayMs) >= exchange.endpoint.minimumBudgetMs else { return nil }
        return delayMs
    }

    /// How a transport error reads for the outcome table: `notSent` only when the request provably
    /// never left; a timeout before the connection was ready counts as abandoned when the deadline
    /// (not the endpoint's own timeout) set the budget; everything after a possible send is
    /// indeterminate.
    static func transportFailure(for error: HTTPTransportError, deadlineBound: Bool) -> TransportFailure {
        guard error.requestMayHaveBeenSent else {
            return error.kind == .timedOut && deadlineBound ? .abandonedBeforeSend : .notSent
        }
        return error.kind == .timedOut ? .timedOutAfterSend : .connectionLostAfterSend
    }

    private static func retryReason(_ answer: IssuerAnswer) -> String {
        switch answer {
        case .issuerError(let status, let code, _): "HTTP \(status)" + (code.map { " \($0)" } ?? "")
        case .transportFailure(let failure): failure.rawValue
        default: "answer"
        }
    }
}
