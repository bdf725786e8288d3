import Foundation
import Kafka
import Testing
import TestSupport

@Test func zzTiming() async throws {
    let c = ContinuousClock()
    var t = c.now
    func lap(_ s: String) { print("LAP \(s): \(c.now - t)"); t = c.now }
    let cluster = try TestCluster()
    let topic = try cluster.makeTopic(partitions: 6)
    let producer = try cluster.producer()
    _ = try await producer.send(KafkaOutgoingMessage(topic: topic, key: Array("k".utf8), value: Array("v".utf8), partition: 2))
    lap("sent")
    let consumer = try cluster.consumer(group: "g", ["debug": "fetch,topic,metadata"])
    try consumer.assign([TopicPartitionOffset(topic: topic, partition: 2, offset: TopicPartitionOffset.beginning)])
    var n = 0
    while n == 0 {
        n = consumer.poll(maxMessages: 10, timeoutMs: 20).count
    }
    lap("consumed")
    consumer.close()
}
