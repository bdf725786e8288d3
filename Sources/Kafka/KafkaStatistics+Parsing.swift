import Foundation

extension KafkaStatistics {
    /// Reads one statistics report (the JSON librdkafka hands to its statistics callback). Throws
    /// `.badMessage` when the bytes are not a JSON object of that shape.
    public init(json: [UInt8]) throws(KafkaError) {
        let wire: Wire
        do {
            let decoder = JSONDecoder()
            decoder.keyDecodingStrategy = .convertFromSnakeCase
            wire = try decoder.decode(Wire.self, from: Data(json))
        } catch {
            throw KafkaError(code: .badMessage, message: "a librdkafka statistics report could not be read (\(json.count) bytes): \(error)",
                             isRetriable: false)
        }
        clientName = wire.name ?? ""
        clientType = wire.type ?? ""
        timestampMicroseconds = wire.ts ?? 0
        queuedMessages = wire.msgCnt ?? 0
        queuedBytes = wire.msgSize ?? 0
        brokers = (wire.brokers ?? [:]).values.map { broker in
            Broker(name: broker.name ?? "", nodeID: broker.nodeid ?? -1, source: broker.source ?? "", state: broker.state ?? "",
                   roundTrip: broker.rtt.map { Window(count: $0.cnt ?? 0, average: $0.avg ?? 0, p50: $0.p50 ?? 0, p99: $0.p99 ?? 0, maximum: $0.max ?? 0) })
        }.sorted { ($0.nodeID, $0.name) < ($1.nodeID, $1.name) }
        var partitions: [Partition] = []
        for (name, topic) in wire.topics ?? [:] {
            for (key, partition) in topic.partitions ?? [:] {
                guard let number = partition.partition ?? Int32(key) else { continue }
                let lag = partition.consumerLag ?? -1
                partitions.append(Partition(
                    topic: topic.topic ?? name, partition: number, leader: partition.leader ?? -1, isDesired: partition.desired ?? false,
                    fetchState: partition.fetchState ?? "", queuedMessages: partition.msgqCnt ?? 0, fetchedMessages: partition.fetchqCnt ?? 0,
                    applicationOffset: partition.appOffset ?? -1001, committedOffset: partition.committedOffset ?? -1001,
                    highWatermark: partition.hiOffset ?? -1, consumerLag: lag >= 0 ? lag : nil))
            }
        }
        self.partitions = partitions.sorted { ($0.topic, $0.partition) < ($1.topic, $1.partition) }
        group = wire.cgrp.map { Group(state: $0.state ?? "", joinState: $0.joinState ?? "", rebalanceCount: $0.rebalanceCnt ?? 0,
                                      assignmentSize: $0.assignmentSize ?? 0) }
    }

    /// The report's JSON as librdkafka writes it (snake_case keys read through
    /// `convertFromSnakeCase`); only the fields this binding uses.
    private struct Wire: Decodable {
        var name: String?
        var type: String?
        var ts: Int64?
        var msgCnt: Int64?
        var msgSize: Int64?
        var brokers: [String: WireBroker]?
        var topics: [String: WireTopic]?
        var cgrp: WireGroup?
    }

    private struct WireBroker: Decodable {
        var name: String?
        var nodeid: Int32?
        var source: String?
        var state: String?
        var rtt: WireWindow?
    }

    private struct WireWindow: Decodable {
        var cnt: Int64?
        var avg: Double?
        var p50: Double?
        var p99: Double?
        var max: Double?
    }

    private struct WireTopic: Decodable {
        var topic: String?
        var partitions: [String: WirePartition]?
    }

    private struct WirePartition: Decodable {
        var partition: Int32?
        var leader: Int32?
        var desired: Bool?
        var fetchState: String?
        var msgqCnt: Int64?
        var fetchqCnt: Int64?
        var appOffset: Int64?
        var committedOffset: Int64?
        var hiOffset: Int64?
        var consumerLag: Int64?
    }

    private struct WireGroup: Decodable {
        var state: String?
        var joinState: String?
        var rebalanceCnt: Int64?
        var assignmentSize: Int64?
    }
}
