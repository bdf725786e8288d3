import Contract
import Issuers

/// A decoded, validated, admitted request on its way to the issuer.
struct ProvisioningJob: Sendable {
    let origin: RecordOrigin
    let value: [UInt8]
    let request: ProvisioningRequest
    let program: ProgramConfiguration
    let endpoint: IssuerEndpoint
    let window: RequestWindow
    let cardRef: Pseudonym?
    let deviceRef: Pseudonym?
    /// Reconciliation instead of a call: a previous owner's `started` marker exists.
    var recoveredFromMarker = false
    /// The issuer call, built and checked at intake (nil until then).
    var call: PreparedCall?
    /// This attempt's `started` marker, once acknowledged: its final is then decided through the
    /// markers log (`FinalDecider`).
    var startedMarker: StartedMarker?

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
