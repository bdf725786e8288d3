/// One partition of a worker topic on the Lag page.
public struct PartitionLag: Sendable, Hashable {
    /// The topic.
    public var topic: String
    /// The partition.
    public var partition: Int32
    /// The worker group's committed offset (nil: nothing committed yet).
    public var committed: Int64?
    /// The log start offset.
    public var low: Int64
    /// The end offset (next offset to be written).
    public var end: Int64

    /// Records not yet committed by the group.
    public var lag: Int64 { max(0, end - (committed ?? low)) }
}
