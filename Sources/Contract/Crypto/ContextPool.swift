import Synchronization

/// A free list of OpenSSL contexts of one kind (key generation, digest, HMAC, cipher), so a hot
/// operation reuses a context instead of allocating and freeing one (and OpenSSL's provider state
/// inside it) every time. A context is used by one thread at a time: `take()` pops one (or makes
/// one), the caller uses it and hands it back with `give(_:)`, or `discard(_:)`s it after a
/// failure; at most `keep` idle contexts are kept, and the rest are freed.
///
/// `@unchecked Sendable` is safe: the free list is behind a mutex, and a taken context is owned by
/// its taker alone until given back.
final class ContextPool: @unchecked Sendable {
    /// A context handed between threads through the free list (owned by one thread at a time).
    private struct Context: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    private let idle = Mutex<[Context]>([])
    private let keep: Int
    private let make: @Sendable () -> OpaquePointer?
    private let free: @Sendable (OpaquePointer) -> Void

    /// A pool keeping up to `keep` idle contexts; `make` creates one (nil when OpenSSL refuses),
    /// `free` releases one.
    init(keep: Int, make: @escaping @Sendable () -> OpaquePointer?, free: @escaping @Sendable (OpaquePointer) -> Void) {
        self.keep = keep
        self.make = make
        self.free = free
    }

    deinit {
        for context in idle.withLock({ $0 }) { free(context.pointer) }
    }

    /// An idle context, or a new one; nil when a new one cannot be made.
    func take() -> OpaquePointer? {
        idle.withLock { $0.popLast() }?.pointer ?? make()
    }

    /// Returns a context after a successful use.
    func give(_ pointer: OpaquePointer) {
        let returned = Context(pointer: pointer)
        let kept = idle.withLock { list in
            guard list.count < keep else { return false }
            list.append(returned)
            return true
        }
        if !kept { free(pointer) }
    }

    /// Frees a context whose state is unknown (an operation on it failed).
    func discard(_ pointer: OpaquePointer) {
        free(pointer)
    }

    /// Idle contexts now.
    var idleCount: Int { idle.withLock { $0.count } }
}
