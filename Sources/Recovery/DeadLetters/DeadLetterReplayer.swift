import Contract
import Dispatch
import Kafka
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Replays dead letters to their original topic (or another), one by one at a bounded rate,
/// refusing those that cannot succeed and auditing every replay with the operator's name.
///
/// Nothing a record says is trusted before its `dlq.mac` verifies under the replay key (the
/// signer's: `DeadLetterSeal`), and a replay goes only to one of `targetTopics` (the configured
/// request and reconcile topics), whatever `dlq.original.topic` or `--to` names.
public struct DeadLetterReplayer: Sendable {
    /// What happened to one entry.
    public enum Outcome: Sendable, Equatable {
        /// Re-produced to `topic` (or would be, in a dry run).
        case replayed(topic: String, dryRun: Bool)
        /// Re-produced to `topic`, but its `replayed` audit event could not be written: do not
        /// replay it again (the worker answers the replay once either way).
        case replayedNotAudited(topic: String, reason: String)
        /// Not replayed, and why.
        case refused(reason: String)
        /// Producing it failed.
        case failed(reason: String)
    }

    /// librdkafka properties for the producer.
    public var properties: [String: String]
    /// Topic for the `replayed` audit events.
    public var auditTopic: String
    /// Who asked (written into each audit event and the `x-replay-operator` header).
    public var operatorName: String
    /// The replay keys (`dlq.replay_signing_secret_env` / `_file`, `dlq.replay_keys`): each dead
    /// letter's `dlq.mac` is checked with the key it names, and each replay is signed with the
    /// current key, so workers accept replays of programs that require signed requests. Nil: every
    /// entry is refused (nothing can be checked).
    public var replayKeys: ReplayKeyring?
    /// The only topics a replay may be produced to: the configured request and reconcile topics
    /// (empty: every entry is refused).
    public var targetTopics: Set<String>

    /// Creates a replayer. `targetTopics` should be the workers' request and reconcile topics.
    public init(properties: [String: String], auditTopic: String, operatorName: String, replayKeys: ReplayKeyring? = nil,
                targetTopics: Set<String> = []) {
        self.properties = properties
        self.auditTopic = auditTopic
        self.operatorName = operatorName
        self.replayKeys = replayKeys
        self.targetTopics = targetTopics
    }

    /// Why `entry` may not be replayed to `target` at `nowMs` (nil: it may, as far as its
    /// authenticity and target go; the replay policy is asked next).
    public func refusal(_ entry: DeadLetterEntry, to target: String?, nowMs: Int64) -> String? {
        guard let provenance = entry.provenance else {
            return entry.provenanceProblem?.reason ?? "no dlq.* provenance headers: not a dead letter this tool wrote"
        }
        guard let replayKeys, replayKeys.current(nowMs: nowMs) != nil else {
            return "this tool has no replay key in use, so it cannot check dlq.mac: give it the workers' replay keys "
                + "(dlq.replay_signing_secret_env or dlq.replay_keys in --config, not all retired) or --sign-env VAR"
        }
        if entry.isSummary {
            // A summary's seal was checked on the whole record when it was read (and is checked
            // again on the whole record read just before it is sent).
            switch entry.seal {
            case .verified: break
            case .failed(let reason): return reason
            case nil: return "dlq.mac was not checked when this entry was read: read it again with the replay key"
            }
        } else if case .failure(let problem) = replayKeys.verify(entry, nowMs: nowMs) {
            return problem.reason
        }
        let topic = target ?? provenance.originalTopic
        guard targetTopics.contains(topic) else {
            let allowed = targetTopics.sorted().joined(separator: ", ")
            return "replays go only to the request or reconcile topic (\(allowed.isEmpty ? "none configured" : allowed)), not \(topic)"
        }
        return nil
    }

    /// The operator name for audit events: the Kafka principal when SASL names one (`label`, the
    /// `--operator` text, beside it), else `label`.
    public static func operatorName(properties: [String: String], label: String?) -> String? {
        let principal = properties["sasl.username"] ?? properties["sasl.kerberos.principal"]
        switch (principal.map(AuditEvent.safeIdentifier), label) {
        case (let principal?, let label?) where label != principal: return AuditEvent.safeIdentifier("\(principal):\(label)")
        case (let principal?, _): return principal
        case (nil, let label): return label
        }
    }

    /// Replays `entries` (oldest first) to `target` or each entry's original topic; with `dryRun`
    /// nothing is produced; `ratePerSecond` spaces the sends. Returns one outcome per entry;
    /// `progress`, when given, hears each one as it is decided (index into `entries`, outcome).
    ///
    /// Entries may be summaries (`DeadLetterStore` reads): the body of each one to be produced is
    /// read again by its offset just before it is sent, checked again, and dropped after, so a
    /// replay holds one body at a time.
    public func replay(_ entries: [DeadLetterEntry], to target: String?, ratePerSecond: Double?, dryRun: Bool,
                       nowMs: @Sendable () -> Int64,
                       progress: ((Int, Outcome) -> Void)? = nil) throws(KafkaError) -> [Outcome] {
        var outcomes: [Outcome] = [] {
            didSet { if let progress, let last = outcomes.last { progress(outcomes.count - 1, last) } }
        }
        let producer = dryRun ? nil : try KafkaProducer(configuration: properties)
        defer { producer?.close(timeoutMs: 10_000) }
        let spacingMs = ratePerSecond.map { Int(1000 / max($0, 0.001)) }
        var sent = 0
        let store = DeadLetterStore(properties: properties)
        for listed in entries {
            var entry = listed
            if entry.isSummary && entry.seal == nil && replayKeys != nil {
                // Read without the replay key: its seal is checked on the whole letter, read again.
                guard let whole = try store.letter(entry.reference) else {
                    outcomes.append(.refused(reason: Self.gone(entry)))
                    continue
                }
                entry = whole
            }
            if let refusal = refusal(entry, to: target, nowMs: nowMs()) {
                outcomes.append(.refused(reason: refusal))
                continue
            }
            guard let provenance = entry.provenance else {
                outcomes.append(.refused(reason: "no dlq.* provenance headers: not a dead letter this tool wrote"))
                continue
            }
            let verdict = DeadLetterReplayPolicy.replayVerdict(provenance: provenance, summary: entry.summary, nowMs: nowMs())
            guard verdict.isReplayable else {
                outcomes.append(.refused(reason: verdict.reason))
                continue
            }
            let topic = target ?? provenance.originalTopic
            guard let producer else {
                outcomes.append(.replayed(topic: topic, dryRun: true))
                continue
            }
            if let spacingMs, sent > 0 { usleep(useconds_t(spacingMs * 1000)) }
            if entry.isSummary {
                guard let whole = try store.letter(entry.reference) else {
                    outcomes.append(.refused(reason: Self.gone(entry)))
                    continue
                }
                entry = whole
                if let refusal = refusal(entry, to: target, nowMs: nowMs()) {
                    outcomes.append(.refused(reason: refusal))
                    continue
                }
            }
            let message: KafkaOutgoingMessage
            do {
                let signer = replayKeys?.signer(nowMs: nowMs())
                let count = signer == nil || topic == provenance.originalTopic ? 1 : try producer.partitionCount(topic: topic, timeoutMs: 10_000)
                message = Self.replayMessage(entry, provenance: provenance, to: topic, operatorName: operatorName,
                                             signer: signer, partitionCount: count, nowMs: nowMs())
            } catch {
                outcomes.append(.failed(reason: error.description))
                continue
            }
            do {
                _ = try producer.sendAndWait(message)
            } catch {
                outcomes.append(.failed(reason: error.description))
                continue
            }
            sent += 1
            do {
                let event = AuditEvent(requestID: entry.summary.requestID, stage: .replayed, atMs: nowMs(), program: entry.summary.program,
                                       wallet: entry.summary.wallet, partition: provenance.originalPartition,
                                       offset: provenance.originalOffset, operator: operatorName,
                                       reason: AuditReason("replayed from the dead-letter topic by an operator"))
                _ = try producer.sendAndWait(KafkaOutgoingMessage(topic: auditTopic, key: entry.summary.requestID.map { Array($0.utf8) },
                                                                  value: event.encodedJSON(), headers: []))
                outcomes.append(.replayed(topic: topic, dryRun: false))
            } catch {
                outcomes.append(.replayedNotAudited(topic: topic, reason: error.description))
            }
        }
        return outcomes
    }

    /// The record that replays `entry` to `topic`: its key and value, its trace and reply headers,
    /// `x-replay-of` (the letter) and `x-replay-operator`; on the original's partition when it goes
    /// back to the original's topic, and signed with `signer` when there is one (a signed replay
    /// names its partition, signature v3; `partitionCount` is the target topic's, for a record
    /// without a partition). The one builder of replays (`dlq replay`, the console, the simulation).
    public static func replayMessage(_ entry: DeadLetterEntry, provenance: DeadLetterProvenance, to topic: String, operatorName: String,
                                     signer: RequestSigner?, partitionCount: Int, nowMs: Int64) -> KafkaOutgoingMessage {
        // Trace context and reply routing go with the replay (the worker checks the route again).
        var headers = DeadLetterSeal.replayedHeaders(entry.headers)
        headers.append(KafkaHeader(key: DeadLetterHeader.replayOf, string: entry.identifier))
        headers.append(KafkaHeader(key: DeadLetterHeader.replayOperator, string: operatorName))
        let message = KafkaOutgoingMessage(topic: topic, key: entry.key, value: entry.value, headers: headers,
                                           partition: topic == provenance.originalTopic ? provenance.originalPartition : nil)
        return signer.map { $0.signed(message, partitionCount: partitionCount, nowMs: nowMs) } ?? message
    }

    /// Why a summary's letter cannot be replayed once the topic no longer holds it.
    private static func gone(_ entry: DeadLetterEntry) -> String {
        "the dead-letter topic no longer holds \(entry.identifier)"
    }
}

extension KafkaProducer {
    /// Sends one message and blocks until it is acknowledged (tools only; never on a hot path).
    func sendAndWait(_ message: KafkaOutgoingMessage, timeoutMs: Int = 30_000) throws(KafkaError) -> KafkaDeliveryReport {
        let semaphore = DispatchSemaphore(value: 0)
        let box = ResultBox()
        try send(message) { result in
            box.set(result)
            semaphore.signal()
        }
        guard semaphore.wait(timeout: .now() + .milliseconds(timeoutMs)) == .success, let result = box.get() else {
            throw KafkaError(code: .timedOut, message: "no delivery report within \(timeoutMs) ms")
        }
        return try result.get()
    }
}

private final class ResultBox: Sendable {
    private let value = Mutex<Result<KafkaDeliveryReport, KafkaError>?>(nil)
    func set(_ result: Result<KafkaDeliveryReport, KafkaError>) { value.withLock { $0 = result } }
    func get() -> Result<KafkaDeliveryReport, KafkaError>? { value.withLock { $0 } }
}
