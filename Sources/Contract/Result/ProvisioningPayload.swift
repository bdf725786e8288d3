/// The normalized provisioning payload an issuer returned (CONTRACT section 4): the plaintext of the
/// result's JWE. Every value is passed through exactly as the issuer sent it.
public enum ProvisioningPayload: Sendable, Hashable {
    /// Apple Pay: the three base64 values for `PKAddPaymentPassRequest`.
    case apple(activationData: Sensitive, encryptedPassData: Sensitive, ephemeralPublicKey: Sensitive)
    /// Google Wallet UPP: the TSP opaque card and, when Google asked for it, the Google OPC.
    case googleWallet(opaquePaymentCard: Sensitive, googleProvisioningPayload: Sensitive?)
    /// Legacy Google Pay: the opaque card, the network (required), and the optional echoes.
    case googlePay(opaquePaymentCard: Sensitive, network: String?, walletType: String?, last4: String?)

    /// The wallet this payload is for.
    public var wallet: Wallet {
        switch self {
        case .apple: .applePay
        case .googleWallet: .googleWallet
        case .googlePay: .googlePay
        }
    }

    /// The largest value DCS documents for its `data` fields, in characters.
    public static let dcsMaxFieldCharacters = 8192

    /// Checks a success response against CONTRACT section 9 and returns what is wrong, or `nil`.
    ///
    /// Apple needs all three values as non-empty strict base64; Google Wallet needs the opaque card,
    /// plus the Google OPC when `googleOPCRequested` (never a device-token-only fallback); Legacy
    /// needs the opaque card and the network; DCS values are at most 8192 characters. The text is ours
    /// and names fields only.
    public func problem(for wallet: Wallet, googleOPCRequested: Bool, issuer: IssuerKind) -> String? {
        guard self.wallet == wallet else {
            return "the issuer answered with a \(self.wallet.rawValue) payload to a \(wallet.rawValue) request"
        }
        var fields: [(String, String)] = []
        switch self {
        case .apple(let activationData, let encryptedPassData, let ephemeralPublicKey):
            fields = [("activation_data", activationData.revealed), ("encrypted_pass_data", encryptedPassData.revealed),
                      ("ephemeral_public_key", ephemeralPublicKey.revealed)]
            for (name, value) in fields {
                guard let bytes = Crypto.base64Decode(value), !bytes.isEmpty else {
                    return "the Apple Pay success lacks \(name) as non-empty base64"
                }
            }
        case .googleWallet(let opaquePaymentCard, let googleProvisioningPayload):
            guard !opaquePaymentCard.isBlank else { return "the Google Wallet success lacks opaque_payment_card" }
            fields = [("opaque_payment_card", opaquePaymentCard.revealed)]
            if googleOPCRequested {
                guard let googleProvisioningPayload, !googleProvisioningPayload.isBlank else {
                    return "google_opc_requested was true but the success lacks google_provisioning_payload"
                }
            }
            if let googleProvisioningPayload {
                fields.append(("google_provisioning_payload", googleProvisioningPayload.revealed))
            }
        case .googlePay(let opaquePaymentCard, let network, _, _):
            guard !opaquePaymentCard.isBlank else { return "the Legacy Google Pay success lacks opaque_payment_card" }
            guard let network, !network.allSatisfy(\.isWhitespace) else {
                return "the Legacy Google Pay success lacks network"
            }
            fields = [("opaque_payment_card", opaquePaymentCard.revealed)]
        }
        if issuer == .dcs {
            for (name, value) in fields where value.count > Self.dcsMaxFieldCharacters {
                return "the DCS success has \(name) longer than \(Self.dcsMaxFieldCharacters) characters"
            }
        }
        return nil
    }

    /// `success(self)` when the payload passes `problem(...)` for the request, else
    /// `invalidSuccessResponse` with the reason.
    public func answer(for request: ProvisioningRequest, issuer: IssuerKind) -> IssuerAnswer {
        let opcRequested = request.google?.googleOPCRequested ?? false
        if let problem = problem(for: request.wallet, googleOPCRequested: opcRequested, issuer: issuer) {
            return .invalidSuccessResponse(reason: problem)
        }
        return .success(self)
    }

    /// The JWE plaintext: `{activation_data, encrypted_pass_data, ephemeral_public_key}`,
    /// `{opaque_payment_card, google_provisioning_payload?}` or
    /// `{opaque_payment_card, network, wallet_type?, last4?}`; absent optional members are omitted.
    public func plaintextJSON() -> [UInt8] {
        var writer = JSONWriter(capacity: 1024)
        writer.beginObject()
        switch self {
        case .apple(let activationData, let encryptedPassData, let ephemeralPublicKey):
            writer.key("activation_data")
            writer.string(activationData.revealed)
            writer.key("encrypted_pass_data")
            writer.string(encryptedPassData.revealed)
            writer.key("ephemeral_public_key")
            writer.string(ephemeralPublicKey.revealed)
        case .googleWallet(let opaquePaymentCard, let googleProvisioningPayload):
            writer.key("opaque_payment_card")
            writer.string(opaquePaymentCard.revealed)
            if let googleProvisioningPayload {
                writer.key("google_provisioning_payload")
                writer.string(googleProvisioningPayload.revealed)
            }
        case .googlePay(let opaquePaymentCard, let network, let walletType, let last4):
            writer.key("opaque_payment_card")
            writer.string(opaquePaymentCard.revealed)
            if let network {
                writer.key("network")
                writer.string(network)
            }
            if let walletType {
                writer.key("wallet_type")
                writer.string(walletType)
            }
            if let last4 {
                writer.key("last4")
                writer.string(last4)
            }
        }
        writer.endObject()
        return writer.bytes
    }

    /// Reads a plaintext produced by `plaintextJSON()` (after `JWE.decrypt`) for `wallet`.
    public static func decode(plaintext: [UInt8], wallet: Wallet) throws(ContractDecodingError) -> ProvisioningPayload {
        guard let document = try? JSONParser().parse(plaintext), case .object(let members) = document else {
            throw ContractDecodingError(field: "", message: "the payload is not a JSON object")
        }
        let reader = FieldReader(members)
        do throws(FieldError) {
            switch wallet {
            case .applePay:
                return .apple(activationData: Sensitive(try reader.requiredString("activation_data")),
                              encryptedPassData: Sensitive(try reader.requiredString("encrypted_pass_data")),
                              ephemeralPublicKey: Sensitive(try reader.requiredString("ephemeral_public_key")))
            case .googleWallet:
                return .googleWallet(opaquePaymentCard: Sensitive(try reader.requiredString("opaque_payment_card")),
                                     googleProvisioningPayload: try reader.string("google_provisioning_payload").map(Sensitive.init))
            case .googlePay:
                return .googlePay(opaquePaymentCard: Sensitive(try reader.requiredString("opaque_payment_card")),
                                  network: try reader.string("network"), walletType: try reader.string("wallet_type"),
                                  last4: try reader.string("last4"))
            }
        } catch {
            throw ContractDecodingError(error)
        }
    }
}
