import HTTP
import Recovery
import Synchronization

/// One bulk replay an operator started: the entries chosen, and each outcome as it is decided.
public final class ReplayJob: Sendable {
    /// One entry of the job as the page shows it.
    public struct Row: Sendable {
        /// `topic:partition:offset`.
        public var identifier: String
        /// The request id, when readable.
        public var requestID: String?
        /// `dlq.code`.
        public var code: String?
        /// Verdict (`pending`, `replayed`, `refused`, …) and detail.
        public var verdict: String
        /// Detail.
        public var detail: String
    }

    /// Its id in URLs (random hex).
    public let id: String
    /// Who started it (the token's name).
    public let operatorName: String
    /// Replays per second.
    public let rate: Double
    private let state: Mutex<(rows: [Row], finished: Bool, failure: String?)>
    private let streams = Mutex<[HTTPEventStream]>([])

    /// Creates a job for `entries`, every row pending.
    public init(id: String, operatorName: String, rate: Double, entries: [DeadLetterEntry]) {
        self.id = id
        self.operatorName = operatorName
        self.rate = rate
        state = Mutex((entries.map { Row(identifier: $0.identifier, requestID: $0.summary.requestID, code: $0.provenance?.code.rawValue,
                                         verdict: "pending", detail: "") }, false, nil))
    }

    /// Records the outcome of row `index`.
    public func record(_ index: Int, _ outcome: DeadLetterReplayer.Outcome) {
        let (verdict, detail) = DeadLetterView.describe(outcome)
        state.withLock { state in
            guard state.rows.indices.contains(index) else { return }
            state.rows[index].verdict = verdict
            state.rows[index].detail = detail
        }
    }

    /// Marks the job done (with the failure that stopped it, if any).
    public func finish(failure: String?) {
        state.withLock { $0.finished = true; $0.failure = failure }
    }

    /// Adds a progress stream (Server-Sent Events) to be fed by `publish`.
    public func watch(_ stream: HTTPEventStream) {
        streams.withLock { $0.append(stream) }
    }

    /// Sends `event` to every progress stream, closing them when the job is done.
    public func publish(_ event: [UInt8]) {
        let finished = snapshot.finished
        let live = streams.withLock { streams in
            streams.removeAll { $0.isFinished }
            defer { if finished { streams.removeAll() } }
            return streams
        }
        for stream in live {
            stream.send(event)
            if finished { stream.close() }
        }
    }

    /// The rows, whether it is done, and why it stopped early.
    public var snapshot: (rows: [Row], finished: Bool, failure: String?) { state.withLock { $0 } }
}

/// Replay jobs by id (the newest 50).
public final class ReplayJobs: Sendable {
    private let jobs = Mutex<[ReplayJob]>([])

    /// Creates an empty table.
    public init() {}

    /// Adds `job`.
    public func add(_ job: ReplayJob) {
        jobs.withLock { jobs in
            jobs.append(job)
            if jobs.count > 50 { jobs.removeFirst(jobs.count - 50) }
        }
    }

    /// The job with `id`.
    public func job(_ id: String?) -> ReplayJob? {
        guard let id else { return nil }
        return jobs.withLock { $0.first { $0.id == id } }
    }
}
