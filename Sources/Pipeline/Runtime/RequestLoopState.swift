import Kafka

/// What the requests consumer loop knows of its partitions and its polls (under its lock).
struct RequestLoopState {
    /// Every held partition's phase and the backpressure pause: the one owner of a
    /// partition's life in this loop (`PartitionLifecycle`).
    var lifecycle = PartitionLifecycle()
    var hasJoined = false
    var lastPollError: String?
    /// Partitions of the requests topic, as metadata last said (the whole the limits are shared over).
    var totalPartitions: Int?
    /// Most requests unsettled at once, read after each poll's records were taken (only they
    /// raise the count).
    var unsettledPeak = 0
    /// Partitions last exported as paused (`provisioner_partition_paused` = 1).
    var exportedPaused: Set<TopicPartition> = []
    /// Raised on every pause or resume the watchdog makes (with the lifecycle's, `FetchWatchdog.Sample.flowVersion`).
    var restarts: UInt64 = 0
    /// Stuck partitions the watchdog found, for the poll thread to restart.
    var stalls: [FetchWatchdog.Stall] = []

    /// Partitions paused now (`PartitionLifecycle.paused`).
    var paused: Set<TopicPartition> { lifecycle.paused }
    /// Raised on every pause or resume this loop makes (`FetchWatchdog.Sample.flowVersion`).
    var flowVersion: UInt64 { lifecycle.flowVersion &+ restarts }
}
