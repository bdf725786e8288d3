import Contract

/// Judges a provisioning request's final result against what the issuer really did with its
/// handshake (CONTRACT §13): the simulator's wallet state and call log are the truth, for the
/// black-box suites (`GET /_sim/wallet`, `GET /_sim/calls`) and for the deterministic simulation.
public enum FinalTruth {
    /// What the issuer did with one handshake, and what the device wallet held.
    public struct Facts: Sendable, Hashable {
        /// How often the handshake reached the issuer.
        public var calls: Int
        /// Whether a wallet token was made by this handshake's call.
        public var applied: Bool
        /// When the first token for the request's card in its wallet on its device was made (by
        /// any call), epoch milliseconds; nil when there is none.
        public var cardInWalletSinceMs: Int64?

        /// Creates the facts.
        public init(calls: Int, applied: Bool, cardInWalletSinceMs: Int64?) {
            self.calls = calls
            self.applied = applied
            self.cardInWalletSinceMs = cardInWalletSinceMs
        }
    }

    /// What Worldpay did with one payment request, or one payment action request (by its trace).
    public struct PaymentFacts: Sendable, Hashable {
        /// How often the request's call (the authorization, or the action through its link) reached Worldpay.
        public var calls: Int
        /// Whether this request's call authorized the payment.
        public var authorized: Bool
        /// Whether this request's call was refused (a payment, refused, exists by it).
        public var refused: Bool
        /// The action this request's call carried out on the payment, if it moved it.
        public var actionApplied: PaymentActionKind?

        /// Creates the facts.
        public init(calls: Int, authorized: Bool, refused: Bool, actionApplied: PaymentActionKind?) {
            self.calls = calls
            self.authorized = authorized
            self.refused = refused
            self.actionApplied = actionApplied
        }
    }

    /// Why `result`, a final of a payment (`action` nil) or of a payment action `action`,
    /// contradicts `facts`; nil when it is true.
    ///
    /// A payment: `authorized` (or `settled`/`cancelled`, a later event read back) only if its
    /// call authorized it; `refused` only if its call was refused; `failed`, `rejected` only if its
    /// call made no payment; `expired` only if it never reached Worldpay.
    /// A payment action: `settled` only if its call settled (fully or partly), `cancelled` only if
    /// its call cancelled; `authorized` (the payment as it was), `refused`, `failed`, `rejected`
    /// only if its call moved nothing; `expired` only if it never reached Worldpay.
    /// `indeterminate` always; a provisioning status never.
    public static func paymentContradiction(_ result: ProvisioningResult, action: PaymentActionKind?, facts: PaymentFacts) -> String? {
        let status = result.status.rawValue
        if result.status == .indeterminate { return nil }
        if result.status == .expired { return facts.calls > 0 ? "answered expired, but the call reached Worldpay" : nil }
        guard let action else {
            switch result.status {
            case .authorized, .settled, .cancelled:
                return facts.authorized ? nil : "answered \(status), but Worldpay authorized no payment by this request's call"
            case .refused:
                return facts.refused ? nil : "answered refused, but Worldpay refused nothing of this request's call"
            case .failed, .rejected:
                return facts.authorized || facts.refused ? "answered \(status), but this request's call made a payment" : nil
            default:
                return "answered \(status) to a payment"
            }
        }
        switch result.status {
        case .settled:
            return facts.actionApplied == .settle || facts.actionApplied == .partialSettle ? nil
                : "answered settled to \(action.rawValue), but this request's call settled nothing"
        case .cancelled:
            return facts.actionApplied == .cancel ? nil : "answered cancelled to \(action.rawValue), but this request's call cancelled nothing"
        case .authorized, .refused, .failed, .rejected:
            return facts.actionApplied.map { "answered \(status) to \(action.rawValue), but this request's call did \($0.rawValue)" }
        default:
            return "answered \(status) to a payment action"
        }
    }

    /// Why `result`, a final of a provisioning request produced at `producedAtMs`, contradicts
    /// `facts`; nil when it is true.
    ///
    /// - `provisioned` only if the handshake's call made a token;
    /// - `already_provisioned` only if it did not, and the card was in that wallet on that device;
    /// - `not_provisioned`, `failed`, `rejected` only if the call made no token, and
    ///   `not_provisioned` only if the card was not in that wallet before the request was produced
    ///   (reconciliation then finds the earlier token: `already_provisioned`);
    /// - `expired` only if the handshake never reached the issuer;
    /// - `indeterminate` always (the truth could not be learned).
    public static func contradiction(_ result: ProvisioningResult, facts: Facts, producedAtMs: Int64) -> String? {
        switch result.status {
        case .provisioned:
            return facts.applied ? nil : "answered provisioned, but the issuer made no wallet token for this handshake"
                + (facts.calls == 0 ? " (it never reached the issuer)" : "")
        case .alreadyProvisioned:
            if facts.applied { return "answered already_provisioned, but this handshake's call made the wallet token" }
            return facts.cardInWalletSinceMs == nil ? "answered already_provisioned, but the card is in no wallet on that device" : nil
        case .notProvisioned, .failed, .rejected:
            if facts.applied { return "answered \(result.status.rawValue), but the issuer applied this handshake" }
            if result.status == .notProvisioned, let since = facts.cardInWalletSinceMs, since < producedAtMs {
                return "answered not_provisioned, but the card was already in that wallet on that device"
            }
            return nil
        case .expired:
            if facts.applied { return "answered expired, but the issuer applied this handshake" }
            return facts.calls > 0 ? "answered expired, but the handshake reached the issuer" : nil
        case .indeterminate:
            return nil
        case .authorized, .refused, .settled, .cancelled:
            return "answered \(result.status.rawValue) to a provisioning request"
        }
    }
}
