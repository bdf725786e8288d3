import Contract
import Foundation
import Harness
import Kafka
import Observability
import Pipeline
import Simulator
import TestSupport
import Testing

@Suite("End to end: broker + simulator + worker", .serialized, .timeLimit(.minutes(10)))
struct EndToEndTests {
    @Test("an Apple Pay request through Imprint is provisioned and its payload relayed untouched")
    func applePayProvisioned() throws {
        let stack = try EmbeddedStack(partitions: 3)
        defer { stack.stop() }
        let logs = CapturingLogHandler()
        try stack.startWorker(try stack.configuration(groupID: "e2e-\(UUID().uuidString)"), logger: Logger(label: "worker", minimumLevel: .debug, handler: logs))
        let collector = try ResultCollector(properties: stack.consumerProperties, topics: stack.topics, partitions: stack.partitions)
        defer { collector.stop() }
        let factory = try RequestFactory(devices: 1)
        let request = try factory.provision(program: "demo-imprint", wallet: .applePay, cardID: "pm_e2e1")
        let producer = try KafkaProducer(configuration: stack.producerProperties)
        defer { producer.close(timeoutMs: 5_000) }
        try producer.send(KafkaOutgoingMessage(topic: stack.topics.requests, key: request.key, value: request.value)) { _ in }
        let arrived = collector.wait(timeoutMs: 30_000) { $0.final(request.requestID) != nil }
        try #require(arrived)
        let result = try #require(collector.snapshot.final(request.requestID))
        #expect(result.status == .provisioned)
        #expect(result.nextAction == .addToWallet)
        let jwe = try #require(result.payload)
        let plaintext = try JWE.decrypt(jwe, with: try #require(request.replyKey))
        let payload = try ProvisioningPayload.decode(plaintext: plaintext, wallet: .applePay)
        guard case .apple(let activation, let encrypted, let ephemeral) = payload else {
            Issue.record("not an Apple payload")
            return
        }
        #expect(!activation.revealed.isEmpty)
        let card = try ApplePassDecryptor.decryptJSON(encryptedPassData: encrypted.revealed, ephemeralPublicKey: ephemeral.revealed,
                                                      leafPrivateKey: try #require(request.appleLeafKey))
        #expect(card["primaryAccountSuffix"]?.stringValue?.isEmpty == false)
    }
}
