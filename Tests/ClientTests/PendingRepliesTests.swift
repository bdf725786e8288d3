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
        #expect(pending.register(RequestIdentity(program: "demo-imprint", requestID: "R"), correlation: correlation) { outcome in
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

    @Test("lookup matches an answer by correlation id, program, request id, wallet and kind")
    func lookupMatchesTheWholeRequest() {
        let awaited = ReplyLookup.Awaited(identity: RequestIdentity(program: "demo-imprint", requestID: "R"), wallet: .applePay,
                                          correlationID: [1, 2, 3])
        func answer(program: String? = "demo-imprint", requestID: String = "R", wallet: Wallet? = .applePay,
                    kind: RequestKind? = .provision) -> ProvisioningResult {
            ProvisioningResult(requestID: requestID, program: program, issuer: nil, wallet: wallet, kind: kind, status: .provisioned,
                               isFinal: true, code: nil, message: "m", nextAction: .none)
        }
        #expect(awaited.isAnswered(by: answer(), correlation: [1, 2, 3]))
        #expect(!awaited.isAnswered(by: answer(), correlation: [9]), "another correlation id")
        #expect(!awaited.isAnswered(by: answer(), correlation: nil), "no correlation id")
        #expect(!awaited.isAnswered(by: answer(program: "demo-dcs"), correlation: [1, 2, 3]), "another program")
        #expect(!awaited.isAnswered(by: answer(program: nil), correlation: [1, 2, 3]), "no program")
        #expect(!awaited.isAnswered(by: answer(requestID: "S"), correlation: [1, 2, 3]), "another request id")
        #expect(!awaited.isAnswered(by: answer(wallet: .googlePay), correlation: [1, 2, 3]), "another wallet")
        #expect(!awaited.isAnswered(by: answer(kind: .payment), correlation: [1, 2, 3]), "another kind")
    }
}
