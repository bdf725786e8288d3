import Contract
import Foundation

/// The worker's answer to one request, as the backend needs it: the outcome, what to do next,
/// and the decrypted payload as typed values.
public struct ProvisioningAnswer: Sendable {
    /// The result as published (payload still encrypted).
    public var result: ProvisioningResult
    /// The decrypted payload, when the card was provisioned and the payload decrypted.
    public var payload: DecryptedPayload?
    /// Why a payload present on the result could not be used (nil when none was sent or it decrypted).
    public var payloadProblem: String?

    /// The request.
    public var requestID: String { result.requestID }
    /// The outcome.
    public var status: ResultStatus { result.status }
    /// Whether this is the last word on the request (a non-final `indeterminate` is returned only
    /// when no final arrived inside the window).
    public var isFinal: Bool { result.isFinal }
    /// What the app should do next.
    public var nextAction: NextAction { result.nextAction }
    /// The error code, when not a success.
    public var code: ErrorCode? { result.code }
}

/// A decrypted provisioning payload.
public enum DecryptedPayload: Sendable {
    /// Apple Pay: the three values `PKAddPaymentPassRequest` takes.
    case apple(activationData: Data, encryptedPassData: Data, ephemeralPublicKey: Data)
    /// Google Wallet: the opaque payment card(s) for `pushTokenize`: the TSP's, and Google's OPC when asked for.
    case googleWallet(opaquePaymentCard: Sensitive, googleProvisioningPayload: Sensitive?)
    /// Legacy Google Pay: the opaque payment card and the card network.
    case googlePay(opaquePaymentCard: Sensitive, network: String?)

    /// Decrypts `jwe` with `key` and reads it for `wallet`; a problem in one line otherwise.
    static func open(_ jwe: String, with key: ReplyPrivateKey, wallet: Wallet) -> Result<DecryptedPayload, ProvisionerClientError> {
        let plaintext: [UInt8]
        do {
            plaintext = try JWE.decrypt(jwe, with: key)
        } catch {
            return .failure(ProvisionerClientError(.payload, "the payload does not decrypt with the reply key (\(error.code))"))
        }
        let payload: ProvisioningPayload
        do {
            payload = try ProvisioningPayload.decode(plaintext: plaintext, wallet: wallet)
        } catch {
            return .failure(ProvisionerClientError(.payload, "the decrypted payload is not a \(wallet.rawValue) payload"))
        }
        switch payload {
        case .apple(let activationData, let encryptedPassData, let ephemeralPublicKey):
            guard let activation = Data(base64Encoded: activationData.revealed), let pass = Data(base64Encoded: encryptedPassData.revealed),
                  let ephemeral = Data(base64Encoded: ephemeralPublicKey.revealed) else {
                return .failure(ProvisionerClientError(.payload, "an Apple Pay payload value is not base64"))
            }
            return .success(.apple(activationData: activation, encryptedPassData: pass, ephemeralPublicKey: ephemeral))
        case .googleWallet(let card, let opc):
            return .success(.googleWallet(opaquePaymentCard: card, googleProvisioningPayload: opc))
        case .googlePay(let card, let network, _, _):
            return .success(.googlePay(opaquePaymentCard: card, network: network))
        }
    }
}
