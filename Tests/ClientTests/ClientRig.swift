import Contract
import Foundation
import Harness
import Kafka
import Observability
import Pipeline
import ProvisionerClient
import Simulator
import TestSupport

/// One client test's world: the embedded stack (broker + simulator), the reply topic
/// `backend.replies` (4 partitions) allowed by a real worker, and clients made on demand. With a
/// `signingSecret`, `demo-imprint` signs its requests (`request_signing`) and clients sign with it:
/// as the key named `signingKeyID` in `request_signing.keys` when one is given.
final class ClientRig: Sendable {
    static let replyTopic = "backend.replies"
    let stack: EmbeddedStack
    let logs = CapturingLogHandler()
    let worker: Worker
    let signingSecret: String?
    let signingKeyID: String?

    init(signingSecret: String? = nil, signingKeyID: String? = nil) throws {
        self.signingSecret = signingSecret
        self.signingKeyID = signingKeyID
        stack = try EmbeddedStack(partitions: 3)
        do {
            try stack.cluster.createTopic(Self.replyTopic, partitions: 4, replicationFactor: 1)
            try stack.cluster.createTopic("other.replies", partitions: 1, replicationFactor: 1)
            let configuration = try stack.configuration(groupID: "client-\(UUID().uuidString)") { configuration in
                configuration.replyTopics = [Self.replyTopic]
                configuration.reconcileTiersMs = [300, 600, 1200]
                if signingSecret != nil, let signingKeyID {
                    configuration.programs["demo-imprint"]?.requestSigningKeys = [
                        RequestSigningKey(id: signingKeyID, secret: .environment("CLIENT_SIGNING"), keyPath: "keys[0]"),
                    ]
                } else if signingSecret != nil {
                    configuration.programs["demo-imprint"]?.requestSigningSecret = .environment("CLIENT_SIGNING")
                }
            }
            worker = try stack.startWorker(configuration, extraEnvironment: signingSecret.map { ["CLIENT_SIGNING": $0] } ?? [:],
                                           logger: Logger(label: "worker", minimumLevel: .warning, handler: logs))
            guard stack.waitForGroup(timeoutMs: 60_000) else { throw TestSupportError("the worker group did not form within 60 s") }
        } catch {
            stack.stop()
            throw error
        }
    }

    /// A client on `partition` of `topic` with a fresh reply key (P-256 unless `key` says otherwise).
    func client(partition: Int32, topic: String = ClientRig.replyTopic, windowMs: Int64? = nil,
                key: ReplyPrivateKey? = nil) throws -> (ProvisionerClient, ReplyPrivateKey) {
        let key = try key ?? ReplyPrivateKey.generate()
        var configuration = ProvisionerClientConfiguration(kafka: ["bootstrap.servers": stack.bootstrapServers], replyTopic: topic,
                                                           replyPartition: partition, replyKey: key,
                                                           signingSecret: signingSecret.map(Sensitive.init), answerWindowMs: windowMs)
        configuration.signingKeyID = signingKeyID
        return (try ProvisionerClient(configuration: configuration), key)
    }

    /// A Google Wallet request for a fresh card (`suffix`: a simulator magic suffix).
    static func google(_ suffix: String = "", program: String = "demo-imprint", requestID: String = "cl-\(UUID().uuidString.prefix(13))")
        -> ClientRequest {
        let handshake = SimulatedDevice.googleHandshakeValues()
        return ClientRequest(requestID: requestID, program: program, cardID: "pm_\(UUID().uuidString.prefix(8))\(suffix)", last4: "4242",
                             handshake: .google(wallet: .googleWallet, walletID: handshake.walletID, deviceID: handshake.deviceID,
                                                opcRequested: true, serverSessionID: handshake.serverSessionID))
    }

    /// An Apple Pay request from a simulated device's PassKit values.
    static func apple(_ suffix: String = "", program: String = "demo-imprint") throws -> ClientRequest {
        let device = try SimulatedDevice()
        let handshake = try device.appleHandshake()
        return ClientRequest(program: program, cardID: "pm_\(UUID().uuidString.prefix(8))\(suffix)", last4: "4242",
                             handshake: .apple(certificates: handshake.certificates.compactMap { Data(base64Encoded: $0) },
                                               nonce: Data(base64Encoded: handshake.nonce)!,
                                               nonceSignature: Data(base64Encoded: handshake.nonceSignature)!,
                                               deviceType: "iphone", appVersion: "5.2.0"))
    }

    func stop() {
        stack.stop()
    }
}

extension SimulatedDevice {
    /// Google callback values as Google hands them over (random wallet and device ids, a session id).
    static func googleHandshakeValues() -> (walletID: String, deviceID: String, serverSessionID: String) {
        (Crypto.hex(Crypto.randomBytes(8)), Crypto.hex(Crypto.randomBytes(6)), "sess-" + Crypto.hex(Crypto.randomBytes(12)))
    }
}
