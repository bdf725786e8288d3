/// The answer side of one server exchange: who delivers the response to libmicrohttpd, and when.
///
/// A value type under `ServerExchange`'s mutex; each method returns what the caller must do with
/// libmicrohttpd *after* releasing the lock. The race it settles: `respond` may run on any thread
/// while the handler is still running, while the polling thread is suspending the connection,
/// after it is suspended, or after the connection is gone.
///
/// ```
/// handling ──handlerReturned, answer waiting──▶ answered (queue now)
///    │ handlerReturned, no answer
///    ▼
/// suspending ──suspendCompleted, answer arrived meanwhile──▶ resuming (polling thread resumes)
///    │ suspendCompleted, no answer
///    ▼
/// suspended ──answer──▶ resuming (answering thread resumes) ──resumed──▶ answered (queue)
/// any ──finish (request-completed callback)──▶ finished (later answers dropped)
/// ```
struct ExchangeState {
    /// Where the exchange stands.
    enum Phase: Equatable {
        case handling, suspending, suspended, resuming, answered, finished
    }

    /// What `answer` requires of its caller.
    enum AnswerAction: Equatable {
        /// Nothing: the polling thread will deliver the stored response.
        case none
        /// Call `MHD_resume_connection`; the polling thread then delivers the response.
        case resume
        /// Ignore: already answered, or the connection is gone.
        case drop
    }

    /// What the polling thread does after the handler returned.
    enum AfterHandler {
        /// Queue this response now.
        case queue(HTTPServerResponse)
        /// Call `MHD_suspend_connection`, then `suspendCompleted()`.
        case suspend
    }

    private(set) var phase: Phase = .handling
    private var response: HTTPServerResponse?

    /// Stores the first answer and says who must act on it.
    mutating func answer(_ answer: HTTPServerResponse) -> AnswerAction {
        switch phase {
        case .handling, .suspending:
            guard response == nil else { return .drop }
            response = answer
            return .none
        case .suspended:
            response = answer
            phase = .resuming
            return .resume
        case .resuming, .answered, .finished:
            return .drop
        }
    }

    /// The handler has returned (polling thread).
    mutating func handlerReturned() -> AfterHandler {
        precondition(phase == .handling, "handlerReturned in phase \(phase)")
        if let answer = response {
            response = nil
            phase = .answered
            return .queue(answer)
        }
        phase = .suspending
        return .suspend
    }

    /// `MHD_suspend_connection` has returned (polling thread); true means resume at once, because
    /// the answer arrived while suspending.
    mutating func suspendCompleted() -> Bool {
        precondition(phase == .suspending, "suspendCompleted in phase \(phase)")
        if response != nil {
            phase = .resuming
            return true
        }
        phase = .suspended
        return false
    }

    /// The connection was resumed and the access handler called again (polling thread): the
    /// response to queue, or nil when there is none (the exchange was not resuming).
    mutating func takeResumedResponse() -> HTTPServerResponse? {
        guard phase == .resuming, let answer = response else { return nil }
        response = nil
        phase = .answered
        return answer
    }

    /// The request-completed callback ran: the connection may be freed, never touch it again.
    mutating func finish() {
        phase = .finished
        response = nil
    }
}
