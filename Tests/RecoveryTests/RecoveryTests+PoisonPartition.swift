import Contract
import Foundation
import Harness
import Kafka
import Observability
import Pipeline
import Recovery
import Testing

extension RecoveryTests {
    // MARK: - 8. A poison message never stalls its partition

    @Test("poison messages never stall their partition: good requests behind them with the same key are answered")
    func poisonDoesNotStallItsPartition() async throws {
        let rig = try RecoveryRig()
        defer { rig.stop() }
        try rig.startWorker(try rig.configuration())
        let topics = rig.topics
        let card = Self.card()
        let key = Array(card.utf8)
        var good: [String] = []
        var poisonAt: [(code: String, partition: Int32, offset: Int64)] = []
        var partitions: Set<Int32> = []
        let template = try rig.factory.provision(program: "demo-imprint", wallet: .googlePay, cardID: card)
        let poisons: [(String, [UInt8])] = [
            ("not_json", PoisonMessage.notJSON),
            ("unknown_version", try PoisonMessage.withVersion(2, template.value)),
            ("oversize", try PoisonMessage.oversize(template.value)),
        ]
        for (code, poison) in poisons {
            let report = try await rig.send(poison, key: key)
            poisonAt.append((code, report.partition, report.offset))
            partitions.insert(report.partition)
            for _ in 0..<2 {
                let request = try rig.factory.provision(program: "demo-imprint", wallet: .googlePay, cardID: card)
                partitions.insert(try await rig.send(request).partition)
                good.append(request.requestID)
            }
        }
        try #require(partitions.count == 1, "one key, one partition")

        let answered = good
        let snapshot = try await rig.wait(for: "every good request answered and every poison dead-lettered") { snapshot in
            answered.allSatisfy { snapshot.final($0) != nil } && snapshot.deadLetters.filter { $0.topic == topics.deadLetters }.count == poisons.count
        }
        for id in good {
            #expect(snapshot.final(id)?.status == .provisioned, "\(id): \(snapshot.final(id)?.message ?? "")")
        }
        let dead = snapshot.deadLetters.filter { $0.topic == topics.deadLetters }
        for poison in poisonAt {
            let entry = dead.first { $0.provenance?.originalOffset == poison.offset && $0.provenance?.originalPartition == poison.partition }
            #expect(entry?.provenance?.code.rawValue == poison.code, "\(poison)")
        }
        #expect(snapshot.deadLetters.filter { $0.topic == topics.parked }.isEmpty)
    }
}
