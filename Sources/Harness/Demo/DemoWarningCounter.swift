import Observability
import Synchronization

/// The demo workers' log handler when their logs are not streamed: counts the records at warning
/// and above for the summary's `worker warnings and errors logged` line, and keeps none.
final class DemoWarningCounter: LogHandler {
    private let warnings = Atomic<Int>(0)

    /// Creates a counter at zero.
    init() {}

    func emit(_ record: LogRecord) {
        if record.level >= .warning { warnings.add(1, ordering: .relaxed) }
    }

    /// Records at warning and above so far.
    var count: Int { warnings.load(ordering: .relaxed) }
}
