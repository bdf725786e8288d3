import Contract
import HTTP
import Kafka

/// The worker's ports to the outside world, in one place: Kafka (produce with acknowledgements,
/// a group member that consumes, commits and rebalances, a reader of markers partitions), the
/// issuer's HTTP, the clock, and every thread, queue and timer (`Executor`). The core (consumer
/// loops, partition lifecycle, intake, call, settlement, fencing, decisions, reconciliation)
/// reaches the outside only through these, so the deterministic simulation
/// (`Tests/SimulationTests`) runs that same core, single-threaded and seeded, against a simulated
/// cluster, issuer and clock. `production(...)` is librdkafka, libcurl and Dispatch.
package struct WorkerRuntime: Sendable {
    /// Threads, queues, timers and consumer loops.
    package var executor: any Executor
    /// Wall-clock milliseconds.
    package var clock: @Sendable () -> Int64
    /// Makes the producer from librdkafka properties; `errors` hears its client-level errors (a
    /// fatal one among them), `statistics` its statistics reports.
    package var makeProducer: @Sendable (_ properties: [String: String], _ errors: @escaping @Sendable (KafkaError) -> Void,
                                         _ statistics: KafkaStatistics.Handler?) throws(KafkaError)
        -> any RecordProducer
    /// Makes a group member from librdkafka properties; rebalances go to the relay, asynchronous
    /// commit outcomes to the handler, statistics reports to `statistics`; records over the limits
    /// (when given) arrive as their sizes and digest only (`KafkaMessage.oversize`).
    package var makeGroupConsumer: @Sendable (_ properties: [String: String], _ limits: KafkaRecordLimits?, _ relay: RebalanceRelay,
                                              _ committed: @escaping @Sendable (Result<[TopicPartitionOffset], KafkaError>) -> Void,
                                              _ statistics: KafkaStatistics.Handler?) throws(KafkaError)
        -> any GroupConsumer
    /// Makes a reader of `topic` for a purpose (its consumer's group id suffix), with property overrides.
    package var makeMarkerReader: @Sendable (_ properties: [String: String], _ topic: String, _ purpose: String,
                                             _ overrides: [String: String]) throws(KafkaError) -> any MarkerLogReader
    /// The issuers' HTTP.
    package var http: any HTTPExchanging
    /// Stops the issuers' HTTP (after the worker stopped).
    package var shutdownHTTP: @Sendable () -> Void
    /// This process's fencing identity, written in its fences and `started` markers (random per start).
    package var instance: String
    /// Deliberate defects for the simulation's self-test (all off in production).
    package var mutations = CoreMutations()
    /// What the simulation watches in the core (nil in production).
    package var probe: (any CoreProbe)?

    /// Creates a runtime from its ports.
    package init(executor: any Executor, clock: @escaping @Sendable () -> Int64,
                 makeProducer: @escaping @Sendable ([String: String], @escaping @Sendable (KafkaError) -> Void,
                                                   KafkaStatistics.Handler?) throws(KafkaError) -> any RecordProducer,
                 makeGroupConsumer: @escaping @Sendable ([String: String], KafkaRecordLimits?, RebalanceRelay,
                                                        @escaping @Sendable (Result<[TopicPartitionOffset], KafkaError>) -> Void,
                                                        KafkaStatistics.Handler?) throws(KafkaError)
                     -> any GroupConsumer,
                 makeMarkerReader: @escaping @Sendable ([String: String], String, String, [String: String]) throws(KafkaError) -> any MarkerLogReader,
                 http: any HTTPExchanging, shutdownHTTP: @escaping @Sendable () -> Void, instance: String) {
        self.executor = executor
        self.clock = clock
        self.makeProducer = makeProducer
        self.makeGroupConsumer = makeGroupConsumer
        self.makeMarkerReader = makeMarkerReader
        self.http = http
        self.shutdownHTTP = shutdownHTTP
        self.instance = instance
    }

    /// librdkafka, libcurl (trusting `caBundlePath`, or the system bundle) and Dispatch.
    package static func production(caBundlePath: String?, clock: @escaping @Sendable () -> Int64) -> WorkerRuntime {
        let http = HTTPClient(configuration: HTTPClientConfiguration(caBundlePath: caBundlePath))
        return WorkerRuntime(
            executor: DispatchExecutor(), clock: clock,
            makeProducer: { (properties, errors, statistics) throws(KafkaError) in
                try KafkaProducer(configuration: properties, onError: errors, statistics: statistics)
            },
            makeGroupConsumer: { (properties, limits, relay, committed, statistics) throws(KafkaError) in
                try KafkaConsumer(configuration: properties, rebalanceListener: relay, commitHandler: committed, statistics: statistics,
                                  recordLimits: limits)
            },
            makeMarkerReader: { (properties, topic, purpose, overrides) throws(KafkaError) in
                try KafkaMarkerLogReader(properties: properties, topic: topic, purpose: purpose, overrides: overrides)
            },
            http: http, shutdownHTTP: { http.shutdown() }, instance: Crypto.hex(Crypto.randomBytes(8)))
    }
}

/// Defects the simulation's self-test puts back on purpose, to show the simulation finds them
/// (docs/TESTING.md, "The deterministic simulation"). Every one is off in production; no
/// configuration key or environment variable sets them.
package struct CoreMutations: Sendable, Equatable {
    /// The catch-up gate removed: records reach intake while their assignment still catches up.
    package var admitBeforeCatchUp = false
    /// Zombie-owner fencing removed: a call follows its `started` marker whatever fences precede it.
    package var callWithoutFencing = false
    /// "A final is decided once" removed: every attempt publishes its own final, a
    /// handed-over reconciliation without looking for the previous owner's answer.
    package var finalsUndecided = false
    /// Reconciliation reads the issuer's state by time alone: a token made before the window counts
    /// for nothing (no `already_provisioned`), one made just before it by another call counts as ours.
    package var reconcileByTimeOnly = false
    /// Reconciliation trusts "no trace of the call" at once, before the issuer's apply horizon.
    package var notAppliedAtOnce = false
    /// A decision's look-up judges a decision without a call by the fences after its start only.
    package var fencesFromPositionOnly = false
    /// An answer given because ownership could not be confirmed before the call's last start is
    /// decided as if the call had been made: a zombie's expiry then counts against the new owner's call.
    package var unconfirmedDecidedAsCall = false
    /// A partition's rewind trusted once carried out: a record past the offset rewound to is taken
    /// although that offset never came back (the seek failed), in both consumer loops.
    package var rewindUnchecked = false
    /// Another consumer group's fences (a renamed `group_id`) counted as this group's: a fence of
    /// a higher generation makes every new assignment stale.
    package var fencesAcrossGroups = false
    /// Another consumer group's fence fences an owner out by generation, not by when each was
    /// written: the old group's fence that lands after a renamed group's first owner fenced stops
    /// that owner's every call, and nobody answers the partition's requests.
    package var lateFenceAcrossGroups = false
    /// A Legacy Google Pay token with the request's recurring handshake reference, made since its
    /// window's start, read as this call's (`provisioned`) although another attempt may have made it.
    package var recurringHandshakeAsOurs = false
    /// A dead letter carries the reply route as intake checked it, not the message's own reply
    /// headers: the replay of an early rejection's letter (its route refused, `reply` nil) is
    /// answered on the default topic instead of refused again, and loses its correlation id.
    package var deadLetterCheckedRoute = false
    /// An exhausted reconciliation's dead letter sent with its final, not after it: a replay of the
    /// letter may publish its final before the exhausted `check_wallet` one lands.
    package var exhaustedLetterWithFinal = false
    /// A payment action's reconciliation trusts an `authorized` payment at once, before the apply
    /// horizon: an action Worldpay carries out late is answered as never done.
    package var actionReadAtOnce = false
    /// An answer without a call published undecided when its partition was given up before the
    /// decision (no fence of its generation left): it may contradict the next owner's answer.
    package var answerAfterGiveUp = false
    /// Answers without a call kept out of the duplicate horizon (neither recorded when settled
    /// nor counted by a catch-up): a copy produced again past the commit is answered afresh.
    package var answersWithoutCallOutOfHorizon = false
    /// An owner judges other processes' fences by their offsets alone: any fence after its own,
    /// an older generation's that landed late included, fences it out.
    package var fencesByOffset = false
    /// A catch-up does not look for a newer owner's fence before its own: an owner whose fence
    /// landed late runs the assignment beside that owner.
    package var staleUnchecked = false

    /// None: production.
    package init() {}
}

/// What the simulation observes inside the core, to check promises that outputs alone cannot
/// show. Production has none.
package protocol CoreProbe: Sendable {
    /// Generation `generation` of `partition` finished its marker catch-up in `worker`.
    func caughtUp(worker: String, partition: TopicPartition, generation: UInt64)
    /// A record of `partition` at `offset`, received in `generation`, reached intake in `worker`.
    func intake(worker: String, partition: TopicPartition, offset: Int64, generation: UInt64)
}
