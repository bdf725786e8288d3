/// One request waiting for (or holding) an issuer-call slot.
public struct SchedulerTicket<Payload: Sendable>: Sendable {
    /// Unique, increasing: arrival order.
    public let id: UInt64
    /// Ordering key (a pseudonym of the card id): two tickets with one key never run at once.
    public let key: String
    /// The program the request belongs to (its bulkhead and rate limit).
    public let program: String
    /// The issuer endpoint the call goes to (its bulkhead and breaker).
    public let endpoint: String
    /// The latest time the result may be published.
    public let publishByMs: Int64
    /// The least time a call needs; a ticket with less time left is answered `expired`.
    public let minimumBudgetMs: Int64
    /// What the caller needs to run the call.
    public let payload: Payload

    /// Creates a ticket.
    public init(id: UInt64, key: String, program: String, endpoint: String, publishByMs: Int64, minimumBudgetMs: Int64, payload: Payload) {
        self.id = id
        self.key = key
        self.program = program
        self.endpoint = endpoint
        self.publishByMs = publishByMs
        self.minimumBudgetMs = minimumBudgetMs
        self.payload = payload
    }

    /// The last moment a call can still start.
    public var latestStartMs: Int64 { publishByMs - minimumBudgetMs }
}
