/// Limits applied while decoding a request.
public struct RequestLimits: Sendable, Hashable {
    /// Largest accepted message (CONTRACT section 3: 64 KiB).
    public var maxBytes: Int
    /// Deepest accepted nesting of arrays and objects.
    public var maxDepth: Int

    /// Creates limits; the defaults are the contract's.
    public init(maxBytes: Int = 64 * 1024, maxDepth: Int = 64) {
        self.maxBytes = maxBytes
        self.maxDepth = maxDepth
    }
}
