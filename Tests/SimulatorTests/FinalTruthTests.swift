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

        static func payment(_ status: ResultStatus, _ action: PaymentActionKind?, _ facts: FinalTruth.PaymentFacts) -> Bool {
            FinalTruth.paymentContradiction(result(status), action: action, facts: facts) == nil
        }

        @Test func aPaymentIsAuthorizedOrRefusedOnlyAsWorldpayDecidedItsCall() {
            let authorized = FinalTruth.PaymentFacts(calls: 1, authorized: true, refused: false, actionApplied: nil)
            let refused = FinalTruth.PaymentFacts(calls: 1, authorized: false, refused: true, actionApplied: nil)
            let nothing = FinalTruth.PaymentFacts(calls: 1, authorized: false, refused: false, actionApplied: nil)
            let unseen = FinalTruth.PaymentFacts(calls: 0, authorized: false, refused: false, actionApplied: nil)
            for status in [ResultStatus.authorized, .settled, .cancelled] {
                #expect(Self.payment(status, nil, authorized) && !Self.payment(status, nil, refused) && !Self.payment(status, nil, nothing), "\(status)")
            }
            #expect(Self.payment(.refused, nil, refused) && !Self.payment(.refused, nil, authorized) && !Self.payment(.refused, nil, nothing))
            for status in [ResultStatus.failed, .rejected] {
                #expect(Self.payment(status, nil, nothing) && !Self.payment(status, nil, authorized) && !Self.payment(status, nil, refused), "\(status)")
            }
            #expect(Self.payment(.expired, nil, unseen) && !Self.payment(.expired, nil, nothing))
            #expect(Self.payment(.indeterminate, nil, authorized) && !Self.payment(.provisioned, nil, authorized))
        }

        @Test func anActionIsSettledOrCancelledOnlyWhenItsCallDidIt() {
            func did(_ action: PaymentActionKind?) -> FinalTruth.PaymentFacts {
                FinalTruth.PaymentFacts(calls: 1, authorized: false, refused: false, actionApplied: action)
            }
            #expect(Self.payment(.settled, .settle, did(.settle)) && Self.payment(.settled, .partialSettle, did(.partialSettle)))
            #expect(!Self.payment(.settled, .settle, did(nil)) && !Self.payment(.settled, .cancel, did(.cancel)))
            #expect(Self.payment(.cancelled, .cancel, did(.cancel)) && !Self.payment(.cancelled, .cancel, did(nil)))
            for status in [ResultStatus.authorized, .refused, .failed, .rejected] {
                #expect(Self.payment(status, .settle, did(nil)) && !Self.payment(status, .settle, did(.settle)), "\(status)")
            }
            #expect(!Self.payment(.expired, .cancel, did(nil)), "the action reached Worldpay")
        }
    }
}
