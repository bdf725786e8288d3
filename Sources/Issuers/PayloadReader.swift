import Contract

/// Reads payload objects that use the normalized snake_case member names; values stay byte for byte.
enum PayloadReader {
    /// Reads a payload object whose members have the normalized names (Imprint's
    /// `provisioning_payload`, Gnosis Pay's whole body).
    static func read(_ object: JSONValue, wallet: Wallet) -> Result<ProvisioningPayload, PayloadProblem> {
        func required(_ name: String) -> Result<Sensitive, PayloadProblem> {
            guard let text = object[name]?.stringValue else {
                return .failure(PayloadProblem(reason: "the \(wallet.rawValue) success lacks \(name) as a string"))
            }
            return .success(Sensitive(text))
        }
        func optional(_ name: String) -> Result<String?, PayloadProblem> {
            guard let member = object[name], !member.isNull else { return .success(nil) }
            guard let text = member.stringValue else {
                return .failure(PayloadProblem(reason: "the \(wallet.rawValue) success has \(name) that is not a string"))
            }
            return .success(text)
        }
        do throws(PayloadProblem) {
            switch wallet {
            case .applePay:
                return .success(.apple(activationData: try required("activation_data").get(),
                                       encryptedPassData: try required("encrypted_pass_data").get(),
                                       ephemeralPublicKey: try required("ephemeral_public_key").get()))
            case .googleWallet:
                return .success(.googleWallet(opaquePaymentCard: try required("opaque_payment_card").get(),
                                              googleProvisioningPayload: try optional("google_provisioning_payload").get().map(Sensitive.init)))
            case .googlePay:
                return .success(.googlePay(opaquePaymentCard: try required("opaque_payment_card").get(),
                                           network: try optional("network").get(), walletType: try optional("wallet_type").get(),
                                           last4: try optional("last4").get()))
            }
        } catch {
            return .failure(error)
        }
    }
}
