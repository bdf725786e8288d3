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
    /// The reference of the request's wallet handshake (`HandshakeReference`): which wallet token
    /// the call would have created; nil for payments and in jobs written before the field existed.
    public var handshakeRef: String?
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
    public var handOver: MarkersPosition?
    /// Set when the call was the job creator's own (an indeterminate answer): where in the markers
    /// log the reconciled final is decided (`FinalDecider`), so that two runs of the job (a record
    /// written twice by a produce retry, or run again after a revoke) publish one final.
    public var decidedIn: MarkersPosition?
    /// Reply routing of the request (Spring request-reply headers): where every result for it goes,
    /// with its correlation id; nil for the default results topic.
    public var reply: ReplyRoute?

    /// The request's identity (program, request id): the key of its markers.
    public var identity: RequestIdentity { RequestIdentity(program: program, requestID: requestID) }

    /// Where a request's markers are: for a hand-over, where to look for the previous owner's
    /// answer; for every job, where its reconciled final is decided (`markers`).
    public var markers: MarkersPosition? { handOver ?? decidedIn }

    /// A request's place in the markers log: its markers partition, where to read from, and the
    /// marker key's parts.
    public struct MarkersPosition: Sendable, Hashable {
        /// The markers partition (= the request's partition).
        public var markersPartition: Int32
        /// The markers offset to read from (the `started` marker of the call is at or after it).
        public var markersFrom: Int64
        /// The dead letter the request replayed (`x-replay-of`), when the call was a replay's.
        public var replayOf: String?
        /// The request's offset in its requests partition (what the reconciler's decision marker
        /// names); nil in jobs written before the field existed.
        public var requestOffset: Int64?

        /// Creates a position.
        public init(markersPartition: Int32, markersFrom: Int64, replayOf: String? = nil, requestOffset: Int64? = nil) {
            self.markersPartition = markersPartition
            self.markersFrom = markersFrom
            self.replayOf = replayOf
            self.requestOffset = requestOffset
        }
    }

    /// Creates a job.
    public init(requestID: String, program: String, issuer: IssuerKind, wallet: Wallet, kind: RequestKind, cardID: Sensitive,
                deviceRef: String?, transactionReference: String?, windowStartMs: Int64, deadlineMs: Int64, attempt: Int,
                dueAtMs: Int64, firstIndeterminateAtMs: Int64, traceparent: String?, handOver: MarkersPosition? = nil,
                decidedIn: MarkersPosition? = nil, reply: ReplyRoute? = nil, handshakeRef: String? = nil) {
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
        self.decidedIn = decidedIn
        self.reply = reply
        self.handshakeRef = handshakeRef
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
        if let handshakeRef { writer.key("handshake_ref"); writer.string(handshakeRef) }
        writer.key("window_start"); writer.integer(windowStartMs)
        writer.key("deadline"); writer.integer(deadlineMs)
        writer.key("attempt"); writer.integer(Int64(attempt))
        writer.key("due_at"); writer.integer(dueAtMs)
        writer.key("first_indeterminate_at"); writer.integer(firstIndeterminateAtMs)
        writer.key("traceparent"); writer.string(orNull: traceparent)
        for (name, position) in [("hand_over", handOver), ("decide_in", decidedIn)] {
            guard let position else { continue }
            writer.key(name); writer.beginObject()
            writer.key("markers_partition"); writer.integer(Int64(position.markersPartition))
            writer.key("markers_from"); writer.integer(position.markersFrom)
            if let replayOf = position.replayOf { writer.key("replay_of"); writer.string(replayOf) }
            if let requestOffset = position.requestOffset { writer.key("request_offset"); writer.integer(requestOffset) }
            writer.endObject()
        }
        if let reply {
            writer.key("reply"); reply.write(to: &writer)
        }
        writer.endObject()
        return writer.bytes
    }

    /// Reads a job record; nil when it is not one (such a record is dead-lettered).
    public static func decode(_ bytes: [UInt8]) -> ReconcileJob? {
        try? read(bytes).get()
    }

    /// Reads a job record, or says why it is not one: every field is bounded (attempt
    /// 1...`RecordBounds.maximumAttempt`, timestamps within `RecordBounds.timestampsMs`, identifiers
    /// as the request decoder accepts them), so a damaged or forged record is refused here and
    /// dead-lettered, never scheduled with values that overflow later.
    public static func read(_ bytes: [UInt8]) -> Result<ReconcileJob, RecordProblem> {
        guard let document = try? JSONParser(maxDepth: 8, maxBytes: 64 * 1024).parse(bytes), document.objectValue != nil else {
            return .failure(RecordProblem("the record is not a JSON object"))
        }
        guard document["version"]?.int64Value == 1 else { return .failure(RecordProblem("version is not 1")) }
        guard let requestID = document["request_id"]?.stringValue, RecordBounds.isToken(requestID) else {
            return .failure(RecordProblem("request_id is missing or not 1-64 of [A-Za-z0-9._:-]"))
        }
        guard let program = document["program"]?.stringValue, RecordBounds.isToken(program) else {
            return .failure(RecordProblem("program is missing or not 1-64 of [A-Za-z0-9._:-]"))
        }
        guard let issuer = document["issuer"]?.stringValue.flatMap(IssuerKind.init(rawValue:)),
              let wallet = document["wallet"]?.stringValue.flatMap(Wallet.init(rawValue:)),
              let kind = document["kind"]?.stringValue.flatMap(RequestKind.init(rawValue:))
        else { return .failure(RecordProblem("issuer, wallet or kind is missing or unknown")) }
        guard let cardID = document["card_id"]?.stringValue, RecordBounds.isCardID(cardID) else {
            return .failure(RecordProblem("card_id is missing or malformed"))
        }
        let deviceRef = document["device_ref"]?.stringValue
        if let deviceRef, !RecordBounds.isToken(deviceRef, maxLength: 128) {
            return .failure(RecordProblem("device_ref is malformed"))
        }
        let transactionReference = document["transaction_reference"]?.stringValue
        if let transactionReference, !RecordBounds.isTransactionReference(transactionReference) {
            return .failure(RecordProblem("transaction_reference is malformed"))
        }
        let handshakeRef = document["handshake_ref"]?.stringValue
        if let handshakeRef, !HandshakeReference.isWellFormed(handshakeRef) {
            return .failure(RecordProblem("handshake_ref is not 64 lowercase hex digits"))
        }
        let traceparent = document["traceparent"]?.stringValue
        if let traceparent, !RecordBounds.isTraceparent(traceparent) {
            return .failure(RecordProblem("traceparent is malformed"))
        }
        var times: [Int64] = []
        for name in ["window_start", "deadline", "due_at", "first_indeterminate_at"] {
            guard let value = document[name]?.int64Value, RecordBounds.isTimestamp(value) else {
                return .failure(RecordProblem("\(name) is missing or not epoch milliseconds between 1970 and 3000"))
            }
            times.append(value)
        }
        guard let attempt = document["attempt"]?.int64Value, RecordBounds.isAttempt(attempt) else {
            return .failure(RecordProblem("attempt is missing or not 1-\(RecordBounds.maximumAttempt)"))
        }
        // A damaged hand_over or decide_in is dropped, not fatal: the job is still reconciled
        // (without waiting for a previous owner's answer, or deciding through the log).
        func position(_ name: String) -> MarkersPosition? {
            guard let record = document[name], let partition = record["markers_partition"]?.int64Value,
                  let from = record["markers_from"]?.int64Value, RecordBounds.partitions.contains(partition), RecordBounds.isOffset(from)
            else { return nil }
            let replayOf = record["replay_of"]?.stringValue
            let requestOffset = record["request_offset"]?.int64Value.flatMap { RecordBounds.isOffset($0) ? $0 : nil }
            guard replayOf == nil || replayOf.flatMap(ReplayReference.init) != nil else { return nil }
            return MarkersPosition(markersPartition: Int32(partition), markersFrom: from, replayOf: replayOf, requestOffset: requestOffset)
        }
        let handOver = position("hand_over")
        let decidedIn = position("decide_in")
        // Unlike hand_over, a damaged reply is fatal: answering anywhere else would lose the answer.
        var reply: ReplyRoute?
        if let record = document["reply"], !record.isNull {
            switch ReplyRoute.read(json: record) {
            case .success(let route): reply = route
            case .failure(let problem): return .failure(RecordProblem(problem.reason))
            }
        }
        return .success(ReconcileJob(requestID: requestID, program: program, issuer: issuer, wallet: wallet, kind: kind,
                                     cardID: Sensitive(cardID), deviceRef: deviceRef, transactionReference: transactionReference,
                                     windowStartMs: times[0], deadlineMs: times[1], attempt: Int(attempt), dueAtMs: times[2],
                                     firstIndeterminateAtMs: times[3], traceparent: traceparent, handOver: handOver,
                                     decidedIn: decidedIn, reply: reply, handshakeRef: handshakeRef))
    }
}

/// Why a record read back from an internal topic was refused (written into `dlq.reason`; never
/// quotes the record's values).
public struct RecordProblem: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong, in one line.
    public var reason: String
    /// Creates a problem.
    public init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}
