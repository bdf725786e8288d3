import Contract
import Simulator
import Testing

extension SimulatorTests {
    /// The truth table of CONTRACT §13: each final status against what the issuer did.
    @Suite struct Truth {
        static func result(_ status: ResultStatus) -> ProvisioningResult {
            ProvisioningResult(requestID: "r", program: "p", issuer: .imprint, wallet: .applePay, kind: .provision, status: status,
                               isFinal: true, code: nil, message: "m", nextAction: .none)
        }

        static let applied = FinalTruth.Facts(calls: 1, applied: true, cardInWalletSinceMs: 100)
        static let refusedAsRepeat = FinalTruth.Facts(calls: 1, applied: false, cardInWalletSinceMs: 50)
        static let unapplied = FinalTruth.Facts(calls: 1, applied: false, cardInWalletSinceMs: nil)
        static let unseen = FinalTruth.Facts(calls: 0, applied: false, cardInWalletSinceMs: nil)
        static let unseenButInWallet = FinalTruth.Facts(calls: 0, applied: false, cardInWalletSinceMs: 50)

        static func isTrue(_ status: ResultStatus, _ facts: FinalTruth.Facts) -> Bool {
            FinalTruth.contradiction(result(status), facts: facts, producedAtMs: 80) == nil
        }

        @Test func provisionedOnlyWhenThisHandshakeMadeTheToken() {
            #expect(Self.isTrue(.provisioned, Self.applied))
            #expect(!Self.isTrue(.provisioned, Self.refusedAsRepeat))
            #expect(!Self.isTrue(.provisioned, Self.unseen))
        }

        @Test func alreadyProvisionedOnlyWhenAnotherCallPutTheCardThere() {
            #expect(Self.isTrue(.alreadyProvisioned, Self.refusedAsRepeat))
            #expect(Self.isTrue(.alreadyProvisioned, Self.unseenButInWallet))
            #expect(!Self.isTrue(.alreadyProvisioned, Self.applied))
            #expect(!Self.isTrue(.alreadyProvisioned, Self.unapplied))
        }

        @Test func noFinalDeniesAnAppliedCall() {
            for status in [ResultStatus.notProvisioned, .failed, .rejected, .expired, .alreadyProvisioned] {
                #expect(!Self.isTrue(status, Self.applied), "\(status)")
            }
            #expect(Self.isTrue(.indeterminate, Self.applied), "check_wallet: the truth could not be learned")
        }

        @Test func notProvisionedWhileTheCardWasAlreadyThereIsUntrue() {
            #expect(Self.isTrue(.notProvisioned, Self.unapplied))
            #expect(!Self.isTrue(.notProvisioned, Self.refusedAsRepeat), "the card was there before the request: already_provisioned")
            let later = FinalTruth.Facts(calls: 1, applied: false, cardInWalletSinceMs: 90)
            #expect(Self.isTrue(.notProvisioned, later), "another request added it after this one was produced")
        }

        @Test func expiredOnlyWhenTheHandshakeNeverReachedTheIssuer() {
            #expect(Self.isTrue(.expired, Self.unseen))
            #expect(!Self.isTrue(.expired, Self.unapplied))
        }

        @Test func paymentStatusesNeverAnswerAProvisioning() {
            #expect(!Self.isTrue(.authorized, Self.applied))
        }
    }
}
