import Foundation
import Synchronization

/// Names no other test (in this run or a parallel one) uses: topics, groups, files.
public enum UniqueName {
    private static let counter = Atomic<Int>(0)

    /// `prefix-<pid>-<n>-<random>`, safe as a Kafka topic or group name.
    public static func make(_ prefix: String) -> String {
        let number = counter.add(1, ordering: .relaxed).newValue
        let random = String(UInt32.random(in: 0...UInt32.max), radix: 36)
        return "\(prefix)-\(ProcessInfo.processInfo.processIdentifier)-\(number)-\(random)"
    }
}
