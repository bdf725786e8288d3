import Contract

extension TopicLayout {
    /// The production layout, identical to `Config/topics.json` (a test holds them equal): the
    /// default of `provisioner topics apply` when no `--spec` is given.
    ///
    /// Every topic: replication factor 3, `min.insync.replicas` 2 (one broker may be down without
    /// stopping writes with `acks=all`), `cleanup.policy` delete. Requests and markers have the same
    /// partition count (markers are co-partitioned with requests): 24, the ceiling on workers that
    /// can share the load. Retention: requests and results 1 day (a request is useless
    /// after its 20–60 s window; shorter retention keeps less personal data), markers 2 days (they
    /// hold the 24 h duplicate horizon, read back at every assignment, with a day's margin for an
    /// outage or a longer horizon), reconciliation jobs
    /// 3 days (outlive a long weekend's outage), dead letters and parked dead letters 14 days (time
    /// for an operator to look and replay), audit 90 days. `segment.ms` is set where retention is
    /// short, so old segments close and can be deleted on time. The requests topic's
    /// `max.message.bytes` is sized to the contract's record bounds (`RecordBounds.Incoming`).
    public static let production = TopicLayout(topics: [
        .requests: DesiredTopic(partitions: 24, replicationFactor: 3, configs: [
            "cleanup.policy": "delete", "min.insync.replicas": "2", "retention.ms": "86400000", "segment.ms": "3600000",
            "max.message.bytes": String(RecordBounds.Incoming.requestsTopicMaxMessageBytes),
        ]),
        .results: DesiredTopic(partitions: 12, replicationFactor: 3, configs: [
            "cleanup.policy": "delete", "min.insync.replicas": "2", "retention.ms": "86400000", "segment.ms": "3600000",
        ]),
        .audit: DesiredTopic(partitions: 12, replicationFactor: 3, configs: [
            "cleanup.policy": "delete", "min.insync.replicas": "2", "retention.ms": "7776000000",
        ]),
        .reconcile: DesiredTopic(partitions: 12, replicationFactor: 3, configs: [
            "cleanup.policy": "delete", "min.insync.replicas": "2", "retention.ms": "259200000", "segment.ms": "3600000",
        ]),
        .dlq: DesiredTopic(partitions: 3, replicationFactor: 3, configs: [
            "cleanup.policy": "delete", "min.insync.replicas": "2", "retention.ms": "1209600000", "segment.ms": "86400000",
        ]),
        .dlqParked: DesiredTopic(partitions: 3, replicationFactor: 3, configs: [
            "cleanup.policy": "delete", "min.insync.replicas": "2", "retention.ms": "1209600000", "segment.ms": "86400000",
        ]),
        .markers: DesiredTopic(partitions: 24, replicationFactor: 3, configs: [
            "cleanup.policy": "delete", "min.insync.replicas": "2", "retention.ms": "172800000", "segment.ms": "3600000",
        ]),
    ])
}
