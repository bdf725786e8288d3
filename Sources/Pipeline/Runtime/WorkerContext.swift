import Contract
import Issuers
import Observability
import Recovery

/// What every stage of the worker shares; built once by `Worker`.
struct WorkerContext: Sendable {
    let configuration: WorkerConfiguration
    let logger: Logger
    let metrics: WorkerMetrics
    let publisher: OutputPublisher
    let audit: AuditTrail
    let issuerClient: IssuerClient
    /// Records the spans of sampled traces (`RequestSpans`); nil when tracing is off.
    let tracer: Tracer?
    /// The secrets in use: issuer endpoints with their credentials, the request authenticator,
    /// the pseudonymizer (`secrets.current`, read once per request).
    let secrets: SecretResolver
    let validator: RequestValidator
    let nonceGuard: NonceGuard
    let duplicates: DuplicateFilter
    let ledger: OffsetLedger
    let markerIndex: MarkerIndex
    /// Request ids answered within the duplicate horizon, per owned partition.
    let horizon: DuplicateHorizon
    /// Zombie-owner fencing: confirms no newer owner's fence precedes a `started` marker before a call.
    let fencing: MarkerFencing
    /// Decides each final once, through the markers log (`FinalDecider`).
    let decider: FinalDecider
    let payloadSealer: PayloadSealer
    let reconcileTiers: ReconcileTiers
    let requestLimits: RequestLimits
    /// Where results go (reply routing).
    let replyRouting: ReplyRouting
    /// Poll errors of both consumer groups that retrying will not heal (`ConsumerErrorWatch`).
    let consumerFault: ConsumerFault
    /// Wall-clock milliseconds.
    let clock: @Sendable () -> Int64
    /// Threads, queues and timers (`WorkerRuntime.executor`).
    let executor: any Executor
    /// Deliberate defects of the simulation's self-test (none in production).
    let mutations: CoreMutations
    /// What the simulation watches (nil in production).
    let probe: (any CoreProbe)?
}
