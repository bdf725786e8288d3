import Contract
import Foundation
import Harness
import Kafka
import Observability
import Pipeline
import TestSupport
import Testing

@Suite("End to end: a fresh PassKit chain per request", .serialized, .timeLimit(.minutes(10)))
struct FreshChainEndToEndTests {
    @Test("Apple Pay requests that each bring a chain never seen before are all verified and provisioned")
    func everyRequestWithItsOwnChainIsProvisioned() throws {
        let stack = try EmbeddedStack(partitions: 3)
        defer { stack.stop() }
        try stack.startWorker(try stack.configuration(groupID: "fresh-chain-\(UUID().uuidString)"),
                              logger: Logger(label: "worker", minimumLevel: .warning, handler: CapturingLogHandler()))
        let collector = try ResultCollector(properties: stack.consumerProperties, topics: stack.topics, partitions: stack.partitions)
        defer { collector.stop() }
        // The worst case for the chain cache: one device, a new leaf (a new chain) for every handshake.
        let factory = try RequestFactory(devices: 1, rotateChainEvery: 1)
        let requests = try (0..<6).map { try factory.provision(program: "demo-imprint", wallet: .applePay, cardID: "pm_fresh\($0)") }
        let leaves = try requests.map { request in
            try #require(try JSONParser().parse(request.value)["apple"]?["certificates"]?.arrayValue?.first?.stringValue)
        }
        #expect(Set(leaves).count == requests.count)
        let producer = try KafkaProducer(configuration: stack.producerProperties)
        defer { producer.close(timeoutMs: 5_000) }
        for request in requests {
            try producer.send(KafkaOutgoingMessage(topic: stack.topics.requests, key: request.key, value: request.value)) { _ in }
        }
        let arrived = collector.wait(timeoutMs: 60_000) { snapshot in requests.allSatisfy { snapshot.final($0.requestID) != nil } }
        try #require(arrived)
        for request in requests {
            let result = try #require(collector.snapshot.final(request.requestID))
            #expect(result.status == .provisioned)
            let plaintext = try JWE.decrypt(try #require(result.payload), with: try #require(request.replyKey))
            guard case .apple = try ProvisioningPayload.decode(plaintext: plaintext, wallet: .applePay) else {
                Issue.record("not an Apple payload")
                continue
            }
        }
    }
}
