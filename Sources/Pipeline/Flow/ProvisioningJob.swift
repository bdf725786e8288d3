import Contract
import Issuers
import Observability

/// A decoded, validated, admitted request on its way to the issuer.
///
/// What intake decided about the request never changes afterwards and is held in one shared box:
/// a job is copied at every step (scheduler tickets, closures handed to other threads), and a copy
/// is then one reference count instead of one per string, array and configuration inside it.
struct ProvisioningJob: Sendable {
    /// The fixed part, shared by every copy of the job.
    private final class Fixed: Sendable {
        let origin: RecordOrigin
        let value: [UInt8]
        let request: ProvisioningRequest
        let program: ProgramConfiguration
        let endpoint: IssuerEndpoint
        let window: RequestWindow
        let cardRef: Pseudonym?
        let deviceRef: Pseudonym?
        let trace: TraceContext?

        init(origin: RecordOrigin, value: [UInt8], request: ProvisioningRequest, program: ProgramConfiguration,
             endpoint: IssuerEndpoint, window: RequestWindow, cardRef: Pseudonym?, deviceRef: Pseudonym?) {
            self.origin = origin
            self.value = value
            self.request = request
            self.program = program
            self.endpoint = endpoint
            self.window = window
            self.cardRef = cardRef
            self.deviceRef = deviceRef
            trace = origin.traceparent.flatMap(TraceContext.init(header:))?.child()
        }
    }

    private let fixed: Fixed
    /// The record the request came in.
    var origin: RecordOrigin { fixed.origin }
    /// The record's value as received.
    var value: [UInt8] { fixed.value }
    /// The decoded request.
    var request: ProvisioningRequest { fixed.request }
    /// The request's program.
    var program: ProgramConfiguration { fixed.program }
    /// The issuer endpoint the program calls.
    var endpoint: IssuerEndpoint { fixed.endpoint }
    /// The request's time window.
    var window: RequestWindow { fixed.window }
    /// The card's pseudonym for audit and metrics.
    var cardRef: Pseudonym? { fixed.cardRef }
    /// The device's pseudonym for audit.
    var deviceRef: Pseudonym? { fixed.deviceRef }
    /// The request's own span, a child of its `traceparent` (nil without a W3C one): the
    /// issuer call's spans are its children, and the issuer receives their ids.
    var trace: TraceContext? { fixed.trace }
    /// When the call's `started` marker was stamped (the end of its queue wait), once it was.
    var startedAtMs: Int64?
    /// Reconciliation instead of a call: a previous owner's `started` marker exists.
    var recoveredFromMarker = false
    /// The issuer call, built and checked at intake (nil until then).
    var call: PreparedCall?
    /// This attempt's `started` marker, once acknowledged: its final is then decided through the
    /// markers log (`FinalDecider`).
    var startedMarker: StartedMarker?

    /// A job for a request intake admitted.
    init(origin: RecordOrigin, value: [UInt8], request: ProvisioningRequest, program: ProgramConfiguration,
         endpoint: IssuerEndpoint, window: RequestWindow, cardRef: Pseudonym?, deviceRef: Pseudonym?) {
        fixed = Fixed(origin: origin, value: value, request: request, program: program, endpoint: endpoint, window: window,
                      cardRef: cardRef, deviceRef: deviceRef)
    }

    /// This job with its record's origin replaced (a new shared box; what else it carries is kept).
    func with(origin: RecordOrigin) -> ProvisioningJob {
        var copy = ProvisioningJob(origin: origin, value: value, request: request, program: program, endpoint: endpoint, window: window,
                                   cardRef: cardRef, deviceRef: deviceRef)
        copy.recoveredFromMarker = recoveredFromMarker
        copy.call = call
        copy.startedMarker = startedMarker
        return copy
    }

    /// Where an attempt's `started` marker was acknowledged, and the epoch it was written with.
    struct StartedMarker: Sendable, Equatable {
        var offset: Int64
        var epoch: Int64
    }

    /// The request's identity (program, request id): what it claims in the duplicate filter and
    /// its markers are keyed by.
    var identity: RequestIdentity { RequestIdentity(request) }

    /// Two jobs with one ordering key never call their issuer at once: the card for provisioning,
    /// the transaction for payments.
    var orderingKey: String {
        switch request.kind {
        case .provision: "\(request.program)|card|\(request.card.id.revealed)"
        case .payment: "\(request.program)|txn|\(request.payment?.transactionReference ?? request.requestID)"
        case .paymentAction: "\(request.program)|txn|\(request.paymentAction?.transactionReference ?? request.requestID)"
        }
    }
}
