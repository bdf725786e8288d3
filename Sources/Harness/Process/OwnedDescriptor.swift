import CPosix
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One open file descriptor and the duty to close it, exactly once.
///
/// A descriptor number is reused by the next `open`/`socket`/`accept` in any thread as soon as it
/// is closed, so a second `close` of the same number closes someone else's file (a Kafka or issuer
/// socket, or a server's listening socket). Every descriptor `ChildProcess` creates is held by one
/// of these and closed only through it: `close()` swaps the number out atomically, so however
/// many paths call it (an error path, the thread that used it, `deinit`), `close(2)` runs once.
final class OwnedDescriptor: Sendable {
    private let number: Atomic<Int32>

    /// Takes ownership of `descriptor` (which must be open and owned by nobody else).
    init(_ descriptor: Int32) {
        number = Atomic(descriptor)
    }

    /// The descriptor number while open, -1 once closed. Use it only on the owning thread.
    var rawValue: Int32 { number.load(ordering: .acquiring) }

    /// Closes the descriptor unless it was closed already.
    func close() {
        let descriptor = number.exchange(-1, ordering: .acquiringAndReleasing)
        if descriptor >= 0 { _ = Glibc.close(descriptor) }
    }

    deinit { close() }

    /// A pipe whose both ends are close-on-exec from the start (`pipe2(O_CLOEXEC)`), so no child
    /// started by any thread in the meantime inherits them.
    static func makePipe() -> (read: OwnedDescriptor, write: OwnedDescriptor)? {
        var ends: [Int32] = [-1, -1]
        guard pipe2(&ends, O_CLOEXEC) == 0 else { return nil }
        return (OwnedDescriptor(ends[0]), OwnedDescriptor(ends[1]))
    }
}
