import Foundation

/// Sizes of the default and the long variant (`PROVISIONER_LONG_TESTS=1`).
enum ReliabilityScale {
    /// Whether the long variant was asked for.
    static let isLong: Bool = ["1", "true", "yes"].contains(ProcessInfo.processInfo.environment["PROVISIONER_LONG_TESTS"]?.lowercased() ?? "")

    /// `short` normally, `long` in the long variant.
    static func pick<T>(_ short: T, long: T) -> T { isLong ? long : short }

    /// The variant's name, for summaries.
    static var variant: String { isLong ? "long" : "default" }
}
