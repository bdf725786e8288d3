#if canImport(Glibc)
import Glibc
#endif

/// The allocator setting of a process that reads whole topics of large records for an operator
/// (`provisioner console`, `provisioner dlq`), beside the bounded buffers of
/// `KafkaConsumerRole.operatorReader`.
///
/// glibc serves a block of at least its mmap threshold with a mapping of its own and unmaps it
/// when freed, but it raises that threshold to the size of every such block freed (up to 32 MiB).
/// After the first record body or fetch response is freed, later ones come from per-thread arenas,
/// which keep their high-water mark, so a read of large records leaves the process holding freed
/// memory it never gives back. A fixed threshold keeps large blocks mapped.
public enum OperatorReaderMemory {
    /// Blocks of at least this size are mapped on their own and given back to the system when freed.
    public static let mappedFromBytes: Int32 = 256 * 1024

    /// Fixes glibc's mmap threshold at `mappedFromBytes` for the whole process (idempotent); does
    /// nothing where the C library is not glibc.
    public static func giveLargeBlocksBack() {
        #if canImport(Glibc)
        // M_MMAP_THRESHOLD; setting it also stops glibc from moving it.
        let mmapThreshold: Int32 = -3
        guard let symbol = dlsym(nil, "mallopt") else { return }
        _ = unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32) -> Int32).self)(mmapThreshold, mappedFromBytes)
        #endif
    }
}
