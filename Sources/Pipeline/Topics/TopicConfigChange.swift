/// One topic configuration entry a plan would set.
public struct TopicConfigChange: Sendable, Hashable {
    /// The entry's name (`retention.ms`).
    public var key: String
    /// The value on the cluster; nil when the topic has no such entry or when it is unknown.
    public var current: String?
    /// False when the cluster's configuration could not be read (the plan then sets every entry).
    public var isCurrentKnown: Bool
    /// The value the layout asks for.
    public var desired: String

    /// Creates a config change.
    public init(key: String, current: String?, isCurrentKnown: Bool, desired: String) {
        self.key = key
        self.current = current
        self.isCurrentKnown = isCurrentKnown
        self.desired = desired
    }
}
