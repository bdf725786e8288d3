import Dispatch
import Synchronization

/// Ephemeral JWE keys made ahead, off the request path: a bounded stock of `EphemeralKey`s per
/// curve, refilled in the background (on a utility-QoS serial queue of the pool's own) whenever a
/// take leaves it below half full. A take removes the key it returns, so no key is handed out
/// twice; when the stock is empty the key is made inline (counted in `inlineCount`), so a burst is
/// slower, never wrong. Keys are never reused: the stock only ever holds keys no one has taken.
///
/// The work per key is the same wherever it runs (a key generation, reading the public half, a
/// derive context and the encoded header); moving it here takes it out of the time between a
/// request's issuer answer and its result. Thread-safe.
final class EphemeralKeyPool: Sendable {
    /// P-256 keys, for P-256 reply keys.
    static let p256 = EphemeralKeyPool(curve: .p256, capacity: 64)
    /// X25519 keys, for X25519 reply keys.
    static let x25519 = EphemeralKeyPool(curve: .x25519, capacity: 64)

    /// The shared pool of `curve`.
    static func shared(_ curve: JWKCurve) -> EphemeralKeyPool {
        switch curve {
        case .p256: p256
        case .x25519: x25519
        }
    }

    private struct State {
        var ready: [EphemeralKey] = []
        var refilling = false
        var madeAhead = 0
        var madeInline = 0
        var refillFailure: CryptoError?
    }

    /// Where this pool's refills run: a serial queue per pool, not a global queue, whose few threads
    /// work items that block (a full worker pool, a test runner's waits) could hold for seconds, and
    /// not one shared by the pools: a refill runs for as long as takers keep the stock below full,
    /// so under load one curve's refill would hold a shared queue and the other curve's stock
    /// would stay empty, every take making its key inline.
    private let refillQueue: DispatchQueue

    /// The curve of the keys.
    let curve: JWKCurve
    /// The most keys held ready.
    let capacity: Int
    private let state = Mutex(State())

    /// A pool holding up to `capacity` keys on `curve`; it fills on first use.
    init(curve: JWKCurve, capacity: Int) {
        self.curve = curve
        self.capacity = max(1, capacity)
        refillQueue = DispatchQueue(label: "provisioner.ephemeral-key-refill.\(curve.rawValue)",
                                    qos: .utility)
    }

    /// Keys ready now.
    var readyCount: Int { state.withLock { $0.ready.count } }
    /// Keys made by the background refill so far.
    var aheadCount: Int { state.withLock { $0.madeAhead } }
    /// Keys made inline because the stock was empty.
    var inlineCount: Int { state.withLock { $0.madeInline } }
    /// Whether a refill is running (one runs from a take that leaves the stock below half until the
    /// stock is full).
    var isRefilling: Bool { state.withLock { $0.refilling } }
    /// Why the latest refill that could not make a key stopped (the next take starts another), if any did.
    var refillFailure: CryptoError? { state.withLock { $0.refillFailure } }

    /// A key no one else has or will get; starts a refill when the stock runs below half.
    func take() throws(CryptoError) -> EphemeralKey {
        let (taken, startRefill) = state.withLock { state -> (EphemeralKey?, Bool) in
            let key = state.ready.popLast()
            if key == nil { state.madeInline += 1 }
            let start = !state.refilling && state.ready.count < (capacity + 1) / 2
            if start { state.refilling = true }
            return (key, start)
        }
        if startRefill {
            refillQueue.async { self.refill() }
        }
        if let taken { return taken }
        return try EphemeralKey(curve: curve)
    }

    /// Makes keys until the stock is full (one refill runs at a time: `refilling`).
    private func refill() {
        while true {
            guard state.withLock({ $0.ready.count < capacity }) else {
                state.withLock { $0.refilling = false }
                return
            }
            let key: EphemeralKey
            do {
                key = try EphemeralKey(curve: curve)
            } catch {
                state.withLock { state in
                    state.refillFailure = error
                    state.refilling = false
                }
                return
            }
            let full = state.withLock { state -> Bool in
                if state.ready.count < capacity {
                    state.ready.append(key)
                    state.madeAhead += 1
                }
                guard state.ready.count >= capacity else { return false }
                state.refilling = false
                return true
            }
            if full { return }
        }
    }
}
