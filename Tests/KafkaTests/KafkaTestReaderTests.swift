import Foundation
import Kafka
import Testing
import TestSupport

@Suite("KafkaTestReader", .timeLimit(.minutes(5)))
struct KafkaTestReaderTests {
    @Test("reads every partition from the beginning: by count, by predicate, and up to the current end")
    func readsWholeTopic() async throws {
        let cluster = try TestCluster()
        let topic = try cluster.makeTopic(partitions: 3)
        let producer = try cluster.producer()
        defer { producer.close(timeoutMs: 1_000) }
        for index in 0..<9 {
            _ = try await producer.send(KafkaOutgoingMessage(topic: topic, key: Array("k\(index)".utf8),
                                                            value: Array("v\(index)".utf8), partition: Int32(index % 3)))
        }
        let reader = KafkaTestReader(bootstrapServers: cluster.bootstrapServers)

        let counted = try await reader.read(topic: topic, count: 9)
        #expect(Set(counted.map { String(decoding: $0.value, as: UTF8.self) }) == Set((0..<9).map { "v\($0)" }))

        let untilV7 = try await reader.read(topic: topic) { messages in messages.contains { $0.value == Array("v7".utf8) } }
        #expect(untilV7.contains { $0.key == Array("k7".utf8) })

        let existing = try await reader.readExisting(topic: topic)
        #expect(existing.count == 9)
        for partition in Int32(0)..<3 {
            #expect(existing.filter { $0.partition == partition }.map(\.offset) == [0, 1, 2], "log order per partition")
        }
    }

    @Test("waits for a topic created later, and says how far it got when the condition never holds")
    func waitsAndTimesOut() async throws {
        let cluster = try TestCluster()
        let topic = UniqueName.make("later")
        async let read = KafkaTestReader(bootstrapServers: cluster.bootstrapServers).read(topic: topic, count: 1)
        try await Task.sleep(for: .milliseconds(200))
        try cluster.cluster.createTopic(topic, partitions: 1, replicationFactor: 1)
        let producer = try cluster.producer()
        defer { producer.close(timeoutMs: 1_000) }
        _ = try await producer.send(KafkaOutgoingMessage(topic: topic, value: Array("late".utf8)))
        #expect(try await read.map(\.value) == [Array("late".utf8)])

        let error = await #expect(throws: TestSupportError.self) {
            _ = try await KafkaTestReader(bootstrapServers: cluster.bootstrapServers)
                .read(topic: topic, timeout: .milliseconds(500)) { $0.count >= 2 }
        }
        #expect(error?.message.contains("read 1 message(s)") == true)
        let all = try await KafkaTestReader(bootstrapServers: cluster.bootstrapServers).readAll(topic: topic, for: .seconds(2))
        #expect(all.count == 1)
    }
}
