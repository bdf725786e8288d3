import Foundation
import Kafka
import Observability
@testable import Pipeline
import Testing

/// A consumer error retrying does not heal, end to end on the mock cluster: the reconciliation
/// topic answered TOPIC_AUTHORIZATION_FAILED in Metadata (as a broker whose ACLs deny it), which
/// librdkafka reports once per metadata refresh. The worker logs it once with the fix, fails
/// readiness with it, and fails for good after the bound (`provisioner worker` then exits 1). The
/// worker here runs with a 3 s bound instead of the default 30 s (`ConsumerErrorWatchTests` holds
/// the bound with time passed in).
@Suite("End to end: a consumer error that retrying does not heal", .serialized, .timeLimit(.minutes(5)))
struct ConsumerFaultTests {
    @Test("reconcile topic not authorized: one error line with the fix, readiness fails, the worker fails for good after the bound")
    func reconcileTopicNotAuthorized() throws {
        let boundMs: Int64 = 3_000
        let rig = try PipelineRig(partitions: 1)
        defer { rig.stop() }
        rig.stack.cluster.setTopicError(rig.stack.topics.reconcile, error: .topicAuthorizationFailed)
        let worker = try rig.startWorker("worker-1") { $0.consumerFailureExitMs = boundMs }
        func errorLines() -> [LogRecord] {
            rig.logs.records.filter { $0.level == .error && $0.message.contains("TOPIC_AUTHORIZATION_FAILED") }
        }
        #expect(PipelineRig.wait(timeoutMs: 30_000) { !worker.isReady && !errorLines().isEmpty },
                "the refused topic did not fail readiness")
        #expect(PipelineRig.wait(timeoutMs: 60_000) { worker.fatalError != nil }, "the worker did not fail for good after the bound")
        let failedForGoodMs = Timestamps.nowMs()
        let errors = errorLines()
        #expect(errors.count == 1, "not one error line: \(errors.map(\.message))")
        if let reportedMs = errors.first?.atMs {
            #expect(failedForGoodMs - reportedMs >= boundMs - 100, "failed for good \(failedForGoodMs - reportedMs) ms after the report")
        }
        #expect(errors.first?.message.contains("grant this worker's principal READ and DESCRIBE") ?? false)
        #expect(worker.fatalError?.contains("TOPIC_AUTHORIZATION_FAILED") ?? false)
        #expect(!worker.isReady)
    }
}
