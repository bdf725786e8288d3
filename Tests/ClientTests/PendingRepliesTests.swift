import Contract
@testable import ProvisionerClient
import Synchronization
import Testing

/// `PendingReplies` without a broker: which answers end a wait. A keyless producer can copy a
/// genuine request's reply headers (correlation id included, they travel in clear) onto a message
/// naming the same request id under another program; its answer must not be taken for the genuine one.
@Suite("PendingReplies")
struct PendingRepliesTests {
    static func result(_ requestID: String, program: String?, status: ResultStatus = .rejected) -> [UInt8] {
        ProvisioningResult(requestID: requestID, program: program, issuer: nil, wallet: .applePay, kind: .provision, status: status,
                           isFinal: true, code: status == .rejected ? .invalidRequest : nil, message: "m", nextAction: .none).encodedJSON()
    }

    @Test("an answer for the same request id and correlation id under another program is ignored; the genuine one ends the wait")
    func anotherProgramIsIgnored() {
        let pending = PendingReplies()
        let received = Mutex<[ResultStatus]>([])
        let correlation: [UInt8] = [1, 2, 3]
        #expect(pending.register(requestID: "R", program: "demo-imprint", correlation: correlation) { outcome in
            if case .success(let result) = outcome { received.withLock { $0.append(result.status) } }
        } == nil)
        pending.deliver(correlation: correlation, value: Self.result("R", program: "demo-dcs"))
        pending.deliver(correlation: correlation, value: Self.result("R", program: nil))
        pending.deliver(correlation: correlation, value: Self.result("other", program: "demo-imprint"))
        #expect(received.withLock { $0 }.isEmpty, "forged or foreign answers end no wait")
        pending.deliver(correlation: correlation, value: Self.result("R", program: "demo-imprint", status: .provisioned))
        #expect(received.withLock { $0 } == [.provisioned])
        #expect(pending.counts.ignored == 3)
    }
}
