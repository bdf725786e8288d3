import Contract
import Synchronization

/// The requests a client awaits, by correlation id, and what arrived for each. An answer counts
/// only when its correlation id, program and request id (`RequestIdentity`) are the request's.
///
/// Threads: `register`, `deliver`, `expire` and `fail` may be called from any thread (the caller's
/// task, the reply reader's poll thread, a timer, the producer's delivery callback); the state is
/// behind one lock, and continuations are resumed after it is released.
final class PendingReplies: Sendable {
    /// How a wait ends: the answer to return, or an error.
    typealias Completion = @Sendable (Result<ProvisioningResult, ProvisionerClientError>) -> Void

    private struct Waiter {
        /// The request awaited: an answer for the same request id under another program is not
        /// this request's (a keyless producer may copy the reply headers).
        let identity: RequestIdentity
        let completion: Completion
        /// The latest non-final answer, returned if no final one comes inside the window.
        var interim: ProvisioningResult?
    }

    private struct State {
        var waiters: [[UInt8]: Waiter] = [:]
        var identities: Set<RequestIdentity> = []
        var closed = false
        /// Answers read that matched no waiter (late, duplicate, or another client's mistake).
        var ignored = 0
        /// Messages read from the reply partition.
        var read = 0
    }

    private let state = Mutex(State())

    /// Starts waiting for request `identity` under `correlation`; an error when that request (or
    /// the correlation id) is already awaited or the client is closed.
    func register(_ identity: RequestIdentity, correlation: [UInt8], completion: @escaping Completion) -> ProvisionerClientError? {
        state.withLock { state in
            if state.closed { return ProvisionerClientError(.closed, "the client is closed") }
            guard !state.identities.contains(identity), state.waiters[correlation] == nil else {
                return ProvisionerClientError(.alreadyAwaited, "request \(AuditEvent.safeIdentifier(identity.requestID)) of program "
                                                  + "\(AuditEvent.safeIdentifier(identity.program)) (or its correlation id) is already awaited")
            }
            state.identities.insert(identity)
            state.waiters[correlation] = Waiter(identity: identity, completion: completion)
            return nil
        }
    }

    /// A message read from the reply partition: its correlation id and value. A final answer ends
    /// its wait; a non-final one is kept; anything else (unknown correlation id, another request
    /// id or program, an undecodable value, a duplicate after the wait ended) is ignored.
    func deliver(correlation: [UInt8]?, value: [UInt8]) {
        let done: (Completion, ProvisioningResult)? = state.withLock { state in
            state.read += 1
            guard let correlation, var waiter = state.waiters[correlation],
                  let result = try? ProvisioningResult.decode(value), result.identity == waiter.identity else {
                state.ignored += 1
                return nil
            }
            guard result.isFinal else {
                waiter.interim = result
                state.waiters[correlation] = waiter
                return nil
            }
            state.waiters[correlation] = nil
            state.identities.remove(waiter.identity)
            return (waiter.completion, result)
        }
        if let (completion, result) = done { completion(.success(result)) }
    }

    /// The window ended: the interim answer when one came, else `noAnswer`.
    func expire(correlation: [UInt8], windowMs: Int64) {
        let done: (Completion, ProvisioningResult?)? = state.withLock { state in
            guard let waiter = state.waiters.removeValue(forKey: correlation) else { return nil }
            state.identities.remove(waiter.identity)
            return (waiter.completion, waiter.interim)
        }
        guard let (completion, interim) = done else { return }
        if let interim {
            completion(.success(interim))
        } else {
            completion(.failure(ProvisionerClientError(.noAnswer, "no answer within \(windowMs) ms of the handshake")))
        }
    }

    /// The request could not be sent: its wait ends with `error`.
    func fail(correlation: [UInt8], error: ProvisionerClientError) {
        let completion: Completion? = state.withLock { state in
            guard let waiter = state.waiters.removeValue(forKey: correlation) else { return nil }
            state.identities.remove(waiter.identity)
            return waiter.completion
        }
        completion?(.failure(error))
    }

    /// Ends every wait with `closed`; later registrations are refused.
    func close() {
        let completions: [Completion] = state.withLock { state in
            state.closed = true
            let all = state.waiters.values.map(\.completion)
            state.waiters = [:]
            state.identities = []
            return all
        }
        for completion in completions { completion(.failure(ProvisionerClientError(.closed, "the client was closed while waiting"))) }
    }

    /// Messages read from the reply partition, and how many of them matched no waiter.
    var counts: (read: Int, ignored: Int) { state.withLock { ($0.read, $0.ignored) } }
}
