import Contract
import Harness
import Simulator

/// Judges the finals of a black-box test's requests against what the issuer simulator did with
/// their handshakes (`FinalTruth`: its call log and wallet state are the truth).
public enum FinalTruthCheck {
    /// The requests whose first final contradicts the simulator, each described for a failure
    /// message (`id status/code/next action: why`). `sent`: each request and when it was produced;
    /// `final`: its first final, if any (requests without one are not judged here).
    public static func untrue(_ sent: [(request: GeneratedRequest, producedAtMs: Int64)], final: (String) -> ProvisioningResult?,
                              simulator: IssuerSimulator) -> [String] {
        let calls = simulator.calls, tokens = simulator.walletTokens
        return sent.compactMap { entry -> String? in
            let request = entry.request
            guard request.kind == .provision, let handshake = request.handshake, let result = final(request.requestID),
                  let value = try? JSONParser().parse(request.value), let cardID = value["card"]?["id"]?.stringValue,
                  let deviceRef = deviceRef(of: request) else { return nil }
            let facts = SimulatorWalletToken.facts(handshake: handshake, cardID: cardID, wallet: request.wallet.rawValue, deviceRef: deviceRef,
                                                   calls: calls, tokens: tokens)
            return FinalTruth.contradiction(result, facts: facts, producedAtMs: entry.producedAtMs).map {
                "\(request.requestID) \(result.status.rawValue)/\(result.code?.rawValue ?? "-")/\(result.nextAction.rawValue): \($0)"
            }
        }
    }

    /// The device reference the simulator keeps on a token for `request`: SHA-256 hex of the
    /// Apple leaf's DER, or of the Google device id.
    public static func deviceRef(of request: GeneratedRequest) -> String? {
        guard let value = try? JSONParser().parse(request.value) else { return nil }
        switch request.wallet {
        case .applePay:
            return value["apple"]?["certificates"]?.arrayValue?.first?.stringValue.flatMap(Crypto.base64Decode).map { Crypto.hex(Crypto.sha256($0)) }
        case .googleWallet, .googlePay:
            return value["google"]?["device_id"]?.stringValue.map { Crypto.hex(Crypto.sha256(utf8: $0)) }
        }
    }
}
