/// A librdkafka release number (`major.minor.revision`), ordered, read from `rd_kafka_version()`'s
/// packed form or from a version string.
public struct KafkaRuntimeVersion: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The major number (2 in 2.10.0).
    public let major: Int
    /// The minor number (10 in 2.10.0).
    public let minor: Int
    /// The revision (0 in 2.10.0).
    public let revision: Int

    /// Creates `major.minor.revision`.
    public init(major: Int, minor: Int, revision: Int) {
        self.major = major
        self.minor = minor
        self.revision = revision
    }

    /// Reads librdkafka's packed integer `0xMMmmrrpp` (`RD_KAFKA_VERSION`, `rd_kafka_version()`):
    /// major, minor and revision one byte each; `pp`, the pre-release number, is ignored.
    public init(packed: Int) {
        self.init(major: (packed >> 24) & 0xff, minor: (packed >> 16) & 0xff, revision: (packed >> 8) & 0xff)
    }

    /// Reads `"2.10.0"` (a suffix after the revision, such as `-RC1`, is ignored); nil unless it
    /// starts with three dot-separated numbers.
    public init?(_ text: String) {
        let parts = text.split(separator: ".", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, let major = Int(parts[0]), let minor = Int(parts[1]) else { return nil }
        let digits = parts[2].prefix { $0.isASCII && $0.isNumber }
        guard let revision = Int(digits) else { return nil }
        self.init(major: major, minor: minor, revision: revision)
    }

    public static func < (lhs: KafkaRuntimeVersion, rhs: KafkaRuntimeVersion) -> Bool {
        (lhs.major, lhs.minor, lhs.revision) < (rhs.major, rhs.minor, rhs.revision)
    }

    /// `major.minor.revision`.
    public var description: String { "\(major).\(minor).\(revision)" }
}
