import Contract

/// A durable request to find out what an issuer really did with a call whose answer was lost
/// (504, timeout after sending). Written to `provisioning.reconcile`, keyed by `request_id`.
///
/// The topic is internal (access-controlled like the requests topic), so the job carries the
/// identifiers a state query needs; it never carries certificates, nonces, signatures or payloads.
public struct ReconcileJob: Sendable, Hashable {
    /// The request being reconciled.
    public var requestID: String
    /// Its program.
    public var program: String
    /// The issuer that was called.
    public var issuer: IssuerKind
    /// The wallet of the request.
    public var wallet: Wallet
    /// `provision` or `payment`.
    public var kind: RequestKind
    /// The issuer's card identifier (needed for the state query).
    public var cardID: Sensitive
    /// SHA-256 hex of the Apple leaf certificate or of the Google device id, when known.
    public var deviceRef: String?
    /// Worldpay transaction reference (payments).
    public var transactionReference: String?
    /// When the request's window started (tokens created before it are older attempts).
    public var windowStartMs: Int64
    /// The request's deadline (for the record; reconciliation runs after it).
    public var deadlineMs: Int64
    /// 1 for the first reconciliation attempt.
    public var attempt: Int
    /// When this attempt is due.
    public var dueAtMs: Int64
    /// When the first indeterminate answer happened.
    public var firstIndeterminateAtMs: Int64
    /// W3C trace context of the request, propagated to results and audit.
    public var traceparent: String?
    /// Set when the call was started by a previous owner of the request's partition, which may
    /// still publish its answer: where that owner's `completed` marker would be.
    public var handOver: HandOver?

    /// Where to look for a previous owner's `completed` marker of the request.
    public struct HandOver: Sendable, Hashable {
        /// The markers partition (= the request's partition).
        public var markersPartition: Int32
        /// The markers offset to read from (the previous owner's `started` marker is at or after it).
        public var markersFrom: Int64
        /// The dead letter the request replayed (`x-replay-of`), when the call was a replay's.
        public var replayOf: String?

        /// Creates a hand-over record.
        public init(markersPartition: Int32, markersFrom: Int64, replayOf: String? = nil) {
            self.markersPartition = markersPartition
            self.markersFrom = markersFrom
            self.replayOf = replayOf
        }
    }

    /// Creates a job.
    public init(requestID: String, program: String, issuer: IssuerKind, wallet: Wallet, kind: RequestKind, cardID: Sensitive,
                deviceRef: String?, transactionReference: String?, windowStartMs: Int64, deadlineMs: Int64, attempt: Int,
                dueAtMs: Int64, firstIndeterminateAtMs: Int64, traceparent: String?, handOver: HandOver? = nil) {
        self.requestID = requestID
        self.program = program
        self.issuer = issuer
        self.wallet = wallet
        self.kind = kind
        self.cardID = cardID
        self.deviceRef = deviceRef
        self.transactionReference = transactionReference
        self.windowStartMs = windowStartMs
        self.deadlineMs = deadlineMs
        self.attempt = attempt
        self.dueAtMs = dueAtMs
        self.firstIndeterminateAtMs = firstIndeterminateAtMs
        self.traceparent = traceparent
        self.handOver = handOver
    }

    /// The JSON record written to the reconcile topic.
    public func encodedJSON() -> [UInt8] {
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("version"); writer.integer(1)
        writer.key("request_id"); writer.string(requestID)
        writer.key("program"); writer.string(program)
        writer.key("issuer"); writer.string(issuer.rawValue)
        writer.key("wallet"); writer.string(wallet.rawValue)
        writer.key("kind"); writer.string(kind.rawValue)
        writer.key("card_id"); writer.string(cardID.revealed)
        writer.key("device_ref"); writer.string(orNull: deviceRef)
        writer.key("transaction_reference"); writer.string(orNull: transactionReference)
        writer.key("window_start"); writer.integer(windowStartMs)
        writer.key("deadline"); writer.integer(deadlineMs)
        writer.key("attempt"); writer.integer(Int64(attempt))
        writer.key("due_at"); writer.integer(dueAtMs)
        writer.key("first_indeterminate_at"); writer.integer(firstIndeterminateAtMs)
        writer.key("traceparent"); writer.string(orNull: traceparent)
        if let handOver {
            writer.key("hand_over"); writer.beginObject()
            writer.key("markers_partition"); writer.integer(Int64(handOver.markersPartition))
            writer.key("markers_from"); writer.integer(handOver.markersFrom)
            if let replayOf = handOver.replayOf { writer.key("replay_of"); writer.string(replayOf) }
            writer.endObject()
        }
        writer.endObject()
        return writer.bytes
    }

    /// Reads a job record; nil when it is not one (such a record is dead-lettered).
    public static func decode(_ bytes: [UInt8]) -> ReconcileJob? {
        guard let document = try? JSONParser(maxDepth: 8, maxBytes: 64 * 1024).parse(bytes),
              document["version"]?.int64Value == 1,
              let requestID = document["request_id"]?.stringValue,
              let program = document["program"]?.stringValue,
              let issuer = document["issuer"]?.stringValue.flatMap(IssuerKind.init(rawValue:)),
              let wallet = document["wallet"]?.stringValue.flatMap(Wallet.init(rawValue:)),
              let kind = document["kind"]?.stringValue.flatMap(RequestKind.init(rawValue:)),
              let cardID = document["card_id"]?.stringValue,
              let windowStart = document["window_start"]?.int64Value,
              let deadline = document["deadline"]?.int64Value,
              let attempt = document["attempt"]?.int64Value, attempt >= 1,
              let dueAt = document["due_at"]?.int64Value,
              let first = document["first_indeterminate_at"]?.int64Value
        else { return nil }
        var handOver: HandOver?
        if let record = document["hand_over"], let partition = record["markers_partition"]?.int64Value,
           let from = record["markers_from"]?.int64Value, (0...Int64(Int32.max)).contains(partition), from >= 0 {
            handOver = HandOver(markersPartition: Int32(partition), markersFrom: from, replayOf: record["replay_of"]?.stringValue)
        }
        return ReconcileJob(requestID: requestID, program: program, issuer: issuer, wallet: wallet, kind: kind,
                            cardID: Sensitive(cardID), deviceRef: document["device_ref"]?.stringValue,
                            transactionReference: document["transaction_reference"]?.stringValue,
                            windowStartMs: windowStart, deadlineMs: deadline, attempt: Int(attempt), dueAtMs: dueAt,
                            firstIndeterminateAtMs: first, traceparent: document["traceparent"]?.stringValue, handOver: handOver)
    }
}
