import Contract
import Kafka
import Recovery

/// Everything the topics say about one request, without its payload or any secret: audit events
/// (with per-stage timings), results (status, code, `next_action`), call markers, reconciliation
/// attempts, dead letters (on the dead-letter and parked topics) and replays.
public struct RequestTrace: Sendable {
    /// A result as the trace shows it (never the payload).
    public struct ResultRow: Sendable {
        /// Status.
        public var status: String
        /// Whether final.
        public var isFinal: Bool
        /// Normalized code.
        public var code: String?
        /// What the caller should do.
        public var nextAction: String
        /// Attempt.
        public var attempt: Int
        /// Issuer HTTP status.
        public var httpStatus: Int?
        /// Published at (epoch ms).
        public var publishedAtMs: Int64?
        /// Where it was read: `topic:partition:offset`.
        public var position: String
    }

    /// A reconciliation job record.
    public struct ReconcileRow: Sendable {
        /// Attempt number.
        public var attempt: Int
        /// When it is due (epoch ms).
        public var dueAtMs: Int64
        /// The request's deadline (epoch ms).
        public var deadlineMs: Int64
    }

    /// A call marker.
    public struct MarkerRow: Sendable {
        /// `started` or `completed`.
        public var state: String
        /// When (epoch ms).
        public var atMs: Int64
        /// Which worker.
        public var worker: String
        /// `answered` / `dead_lettered` for a completed marker.
        public var outcome: String?
        /// The dead letter a replay came from.
        public var replayOf: String?
    }

    /// The request id.
    public var requestID: String
    /// Audit events, oldest first.
    public var audit: [AuditEvent] = []
    /// Results, in topic order.
    public var results: [ResultRow] = []
    /// Call markers.
    public var markers: [MarkerRow] = []
    /// Reconciliation jobs.
    public var reconciliations: [ReconcileRow] = []
    /// Dead letters and parked entries, as summaries (no bodies).
    public var deadLetters: [DeadLetterEntry] = []

    /// The most rows of each kind a trace keeps (the newest read): a request id anyone can reuse
    /// must not make a trace hold a topic.
    public static let rowLimit = 200

    /// Whether some rows were left out (`rowLimit`).
    public var truncated = false

    /// Appends `row`, dropping the oldest kept one beyond `rowLimit`.
    mutating func keep<Row>(_ row: Row, in rows: WritableKeyPath<RequestTrace, [Row]>) {
        self[keyPath: rows].append(row)
        if self[keyPath: rows].count > Self.rowLimit {
            self[keyPath: rows].removeFirst(self[keyPath: rows].count - Self.rowLimit)
            truncated = true
        }
    }

    /// The `replayed` audit events.
    public var replays: [AuditEvent] { audit.filter { $0.stage == .replayed } }
}

/// Builds `RequestTrace`s by reading the pipeline topics (newest `traceScanLimit` records per partition).
public struct RequestTracer: Sendable {
    /// The reader.
    public var reader: TopicReader
    /// Topic names.
    public var topics: TopicNames

    /// Creates a tracer.
    public init(reader: TopicReader, topics: TopicNames) {
        self.reader = reader
        self.topics = topics
    }

    /// The request ids whose audit events carry `cardRef` (a `card_ref` pseudonym), newest last, at
    /// most 20: across pseudonym key rotations too, since an event written during one carries
    /// the card's pseudonym under both keys (`card_ref`, `card_ref_previous`), which joins the
    /// events under either key.
    public func requestIDs(cardRef: String) throws(KafkaError) -> [String] {
        var events: [(id: String, refs: [String])] = []
        try reader.read(topics.audit) { message in
            guard let event = try? AuditEvent.decode(message.value), let card = event.cardRef, let id = event.requestID else { return }
            events.append((id, card.texts))
        }
        return Array(Self.requestIDs(events, joining: cardRef).suffix(20))
    }

    /// The ids of `events` (in order, each once) whose pseudonyms join `cardRef`: carry it, or
    /// carry one that an event carrying it also carries, and so on.
    static func requestIDs(_ events: [(id: String, refs: [String])], joining cardRef: String) -> [String] {
        var known: Set<String> = [cardRef]
        var grew = true
        while grew {
            grew = false
            for event in events where event.refs.count > 1 && event.refs.contains(where: known.contains) {
                for ref in event.refs where known.insert(ref).inserted { grew = true }
            }
        }
        var ids: [String] = []
        for event in events where event.refs.contains(where: known.contains) && !ids.contains(event.id) { ids.append(event.id) }
        return ids
    }

    /// The trace of `requestID`.
    public func trace(_ requestID: String) throws(KafkaError) -> RequestTrace {
        var trace = RequestTrace(requestID: requestID)
        try reader.read(topics.audit) { message in
            if let event = try? AuditEvent.decode(message.value), event.requestID == requestID { trace.keep(event, in: \.audit) }
        }
        trace.audit.sort { $0.atMs < $1.atMs }
        try reader.read(topics.results) { message in
            guard let result = try? ProvisioningResult.decode(message.value), result.requestID == requestID else { return }
            trace.keep(RequestTrace.ResultRow(status: result.status.rawValue, isFinal: result.isFinal, code: result.code?.rawValue,
                                       nextAction: result.nextAction.rawValue, attempt: result.attempt, httpStatus: result.httpStatus,
                                       publishedAtMs: result.timing.publishedAtMs ?? message.timestampMs,
                                       position: "\(message.topic):\(message.partition):\(message.offset)"), in: \.results)
        }
        try reader.read(topics.markers) { message in
            guard let marker = CallMarker.decode(message.value), marker.requestID == requestID else { return }
            trace.keep(RequestTrace.MarkerRow(state: marker.state.rawValue, atMs: marker.atMs, worker: marker.worker,
                                              outcome: marker.outcome?.rawValue, replayOf: marker.replayOf), in: \.markers)
        }
        try reader.read(topics.reconcile) { message in
            guard let job = ReconcileJob.decode(message.value), job.requestID == requestID else { return }
            trace.keep(RequestTrace.ReconcileRow(attempt: job.attempt, dueAtMs: job.dueAtMs, deadlineMs: job.deadlineMs), in: \.reconciliations)
        }
        for topic in [topics.deadLetters, topics.parked] {
            try reader.read(topic) { message in
                let entry = DeadLetterEntry(message: message)
                if entry.summary.requestID == requestID { trace.keep(entry.summarized(), in: \.deadLetters) }
            }
        }
        return trace
    }
}
