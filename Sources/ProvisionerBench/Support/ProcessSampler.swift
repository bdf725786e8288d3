import Foundation
import Synchronization

/// Samples a process's resident memory and thread count every `intervalMs` in the background.
final class ProcessSampler: Sendable {
    struct Sample: Sendable {
        let atMs: Double
        let residentMegabytes: Double
        let threads: Int
    }

    private let samples = Mutex<[Sample]>([])
    private let stopFlag = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)

    init(pid: Int32, intervalMs: Int = 500) {
        let thread = Thread { [self] in
            let start = ProcessUsage.monotonicMilliseconds()
            while !stopFlag.load(ordering: .relaxed) {
                let sample = Sample(atMs: ProcessUsage.monotonicMilliseconds() - start,
                                    residentMegabytes: ProcessUsage.residentMegabytes(pid: pid), threads: ProcessUsage.threadCount(pid: pid))
                samples.withLock { $0.append(sample) }
                usleep(useconds_t(intervalMs * 1000))
            }
            done.signal()
        }
        thread.start()
    }

    /// Stops sampling and returns every sample.
    func stop() -> [Sample] {
        if !stopFlag.exchange(true, ordering: .relaxed) { done.wait() }
        return samples.withLock { $0 }
    }
}
