import Contract
import Issuers

extension IssuerClient {
    func provision(_ request: ProvisioningRequest, endpoint: IssuerEndpoint, publishByMs: Int64) async -> IssuerCallReport {
        await withCheckedContinuation { continuation in
            provision(request, endpoint: endpoint, publishByMs: publishByMs) { continuation.resume(returning: $0) }
        }
    }

    func paymentAction(_ action: PaymentActionInstruction, endpoint: IssuerEndpoint, publishByMs: Int64) async -> IssuerCallReport {
        await withCheckedContinuation { continuation in
            paymentAction(action, endpoint: endpoint, publishByMs: publishByMs) { continuation.resume(returning: $0) }
        }
    }

    func reconcile(_ query: ReconcileQuery, endpoint: IssuerEndpoint, publishByMs: Int64) async -> ReconcileAnswer {
        await withCheckedContinuation { continuation in
            reconcile(query, endpoint: endpoint, publishByMs: publishByMs) { continuation.resume(returning: $0) }
        }
    }
}
