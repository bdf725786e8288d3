@testable import Console
import Contract
import Dispatch
import Foundation
import HTTP
import Kafka
import Observability
import Pipeline
@testable import Recovery
import Synchronization
import Testing
import TestSupport

/// A dead-letter topic anyone who can write it fills with large records does not knock the
/// console over: its reads keep summaries (provenance, sizes, a digest), not bodies, and at most
/// `DeadLetterFilter.maximumLimit` of them whatever a viewer asks.
@Suite("Console: bounded dead-letter reads", .serialized, .timeLimit(.minutes(10)))
struct ConsoleBoundedReadsTests {
    /// Resident set size of this process, in bytes (`VmRSS`).
    static func residentBytes() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kib = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else { return 0 }
        return kib * 1024
    }

    /// Gives the heap's free memory back to the system (`malloc_trim(0)`), so that resident size
    /// grows again with what is allocated next rather than reusing what producing left free.
    static func trimHeap() {
        guard let symbol = dlsym(nil, "malloc_trim") else { return }
        _ = unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)(0)
    }

    /// The highest resident size seen while it runs (sampled every 5 ms on a thread of its own).
    final class PeakResidentSize: Sendable {
        private let peak = Atomic<Int>(0)
        private let running = Atomic<Bool>(true)
        private let stopped = DispatchSemaphore(value: 0)

        init() {
            DispatchQueue.global().async { [self] in
                while running.load(ordering: .relaxed) {
                    peak.max(ConsoleBoundedReadsTests.residentBytes(), ordering: .relaxed)
                    usleep(5_000)
                }
                stopped.signal()
            }
        }

        /// Stops sampling; the peak seen.
        func stop() -> Int {
            running.store(false, ordering: .relaxed)
            stopped.wait()
            return peak.load(ordering: .relaxed)
        }
    }

    /// librdkafka's mock cluster keeps at most 5 MB per partition: 60 partitions hold 300 records
    /// of 900 KB (five each).
    static let partitions = 60

    @Test("300 parked records of 900 KB: the dead-letters page and a trace answer; a read keeps summaries; memory stays bounded; a limit above the cap is capped")
    func floodedParkedTopic() async throws {
        // The allocator setting `provisioner console` makes at start.
        OperatorReaderMemory.giveLargeBlocksBack()
        let stack = try EmbeddedStack(brokers: 1, partitions: Self.partitions)
        defer { stack.stop() }
        let token = "alice-" + Crypto.hex(Crypto.randomBytes(12))
        var configuration = ConsoleConfiguration()
        configuration.listen = HostPort("127.0.0.1:0")!
        configuration.tokens = [ConsoleToken(name: "alice", role: .replayer, hash: TokenHash(token: token, iterations: TokenHash.minimumIterations))]
        let monitor = MetricsMonitor(endpoints: [], intervalMs: 1_000)
        let context = ConsoleContext(kafka: stack.consumerProperties, topics: stack.topics, groupID: UniqueName.make("console-bounded"),
                                     configuration: configuration,
                                     replayKeys: ReplayKeyring(signer: RequestSigner(secret: Sensitive("ReplayKey" + Crypto.hex(Crypto.randomBytes(16))))),
                                     logger: Logger(label: "console", minimumLevel: .info, handler: CapturingLogHandler()), monitor: monitor)
        let server = try ConsoleServer(host: "127.0.0.1", port: 0, context: context)
        defer {
            server.stop()
            monitor.stop()
        }
        let producer = try KafkaProducer(configuration: stack.producerProperties)
        defer { producer.close(timeoutMs: 5_000) }
        let parked = stack.topics.parked
        let count = 300
        let valueBytes = 900_000
        let now = Timestamps.nowMs()
        // Unsigned (no dlq.mac) parked records with a parsable x-replay-of, each a request whose
        // value is ~900 KB: what a writer of the parked topic can plant.
        let filler = String(repeating: "a", count: valueBytes - 200)
        for index in 0..<count {
            let value = Array(#"{"version":1,"request_id":"flood-\#(index)","program":"demo-imprint","wallet":"google_pay","card":{"id":"pm_flood"},"filler":"\#(filler)"}"#.utf8)
            let provenance = DeadLetterProvenance(
                originalTopic: stack.topics.requests, originalPartition: 0, originalOffset: Int64(index), originalTimestampMs: now,
                code: DeadLetterCode(.unknownVersion), reason: "failed again", attempts: 1, firstFailedAtMs: now, failedAtMs: now + Int64(index),
                worker: "w", group: "g", isReplayable: true, replayableReason: "replay after deploying a worker that reads this version")
            let headers = provenance.headers + [KafkaHeader(key: DeadLetterHeader.replayOf, string: "\(stack.topics.deadLetters):0:\(index)")]
            _ = try producer.sendAndWait(KafkaOutgoingMessage(topic: parked, key: Array("flood-\(index)".utf8), value: value,
                                                              headers: headers, partition: Int32(index % Self.partitions)))
        }

        // The pages answer, and the process does not grow by the topic's size to serve them.
        let browser = ConsoleClient(base: "http://127.0.0.1:\(server.port)")
        #expect(try await browser.login(token) == 303)
        Self.trimHeap()
        let before = Self.residentBytes()
        let sampler = PeakResidentSize()
        let list = try await browser.get("/dead-letters?parked=1&limit=1000000000")
        #expect(list.status == 200, "a limit above the cap is read as the cap: \(list.body.prefix(300))")
        #expect(list.body.contains("\(count) in \(parked)"), "\(list.body.prefix(600))")
        let overview = try await browser.get("/dead-letters")
        #expect(overview.status == 200 && overview.body.contains("Parked: \(ConsoleApp.parkedShown) (the newest)"))
        let trace = try await browser.get("/trace?q=flood-7")
        #expect(trace.status == 200 && trace.body.contains("flood-7"))
        let entry = try await browser.get("/dead-letters/entry?id=\(parked):1:2&parked=1")
        #expect(!entry.body.contains(String(filler.prefix(64))), "the filler is not redacted")
        #expect(entry.status == 200 && entry.body.contains("redacted-value"), "the one letter shown is read by its offset")
        let grown = sampler.stop() - before
        #expect(grown < 128 << 20, "serving the pages grew the console's process by up to \(grown >> 20) MiB (the topic holds \((count * valueBytes) >> 20) MiB)")

        // What a read keeps: every entry, as a summary of a few hundred bytes, not 270 MB of bodies.
        var filter = DeadLetterFilter()
        filter.limit = 1_000_000
        let asked = filter
        let store = DeadLetterStore(properties: stack.consumerProperties)
        let read = try await DedicatedThread.run(name: "dlq-read") { try store.read(topic: parked, filter: asked) }
        #expect(read.scanned == count && read.entries.count == count, "\(read.scanned) read, \(read.entries.count) kept")
        #expect(read.entries.allSatisfy { $0.isSummary && $0.value == nil && $0.key == nil && $0.valueBytes > valueBytes - 300 })
        #expect(read.entries.allSatisfy { $0.summary.requestID?.hasPrefix("flood-") == true && $0.replayOf != nil && $0.valueDigest.count == 64 })
        #expect(read.peakRetainedBytes < 1 << 20, "a read of \(count) letters held \(read.peakRetainedBytes) bytes")

        // The cap: whatever is asked, at most maximumLimit.
        #expect(DeadLetterFilter.maximumLimit == 1_000)
        #expect(try DeadLetterFilter.parse(["limit": "5000"], nowMs: now).limit == 1_000)
        #expect(try DeadLetterFilter.parse(["limit": "99999999999999999999999"], nowMs: now).limit == 1_000)
        #expect(throws: DeadLetterFilter.ParseProblem.self) { try DeadLetterFilter.parse(["limit": "0"], nowMs: now) }
    }
}
