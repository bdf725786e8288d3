import Foundation
import Kafka
import TestSupport

/// Reads a group's committed positions and the partitions' ends (on a thread of its own).
enum KafkaChecks {
    /// For each partition of `topic`: (committed offset of `group` or -1, high watermark).
    static func commitProgress(bootstrapServers: String, group: String, topic: String,
                               partitions: Int) async throws -> [Int32: (committed: Int64, end: Int64)] {
        try await DedicatedThread.run(name: "commit-check") { () throws -> [Int32: (committed: Int64, end: Int64)] in
            let consumer = try KafkaConsumer(configuration: ["bootstrap.servers": bootstrapServers, "group.id": group,
                                                             "enable.auto.commit": "false"], rebalanceListener: nil)
            defer { consumer.close() }
            let list = (0..<Int32(partitions)).map { TopicPartition(topic: topic, partition: $0) }
            let committed = try consumer.committed(list, timeoutMs: 10_000)
            var progress: [Int32: (committed: Int64, end: Int64)] = [:]
            for partition in list {
                let end = try consumer.watermarks(partition, timeoutMs: 10_000).high
                let offset = committed.first { $0.partition == partition.partition }?.offset ?? -1
                progress[partition.partition] = (offset, end)
            }
            return progress
        }
    }

    /// Waits until `group` has committed every partition of `topic` up to its end (a partition that
    /// never held a record has nothing to commit).
    static func waitForCommitsAtEnd(bootstrapServers: String, group: String, topic: String, partitions: Int,
                                    timeoutMs: Int64) async throws -> [Int32: (committed: Int64, end: Int64)] {
        let deadline = Date().addingTimeInterval(Double(timeoutMs) / 1000)
        while true {
            let progress = try await commitProgress(bootstrapServers: bootstrapServers, group: group, topic: topic, partitions: partitions)
            if progress.values.allSatisfy({ $0.committed == $0.end || $0.end == 0 }) || Date() >= deadline { return progress }
            try await Task.sleep(for: .milliseconds(200))
        }
    }
}
