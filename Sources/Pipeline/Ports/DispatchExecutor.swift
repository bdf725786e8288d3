import Dispatch
import Foundation

/// The production `Executor`: Dispatch queues, `DispatchTimer`s, and one `Thread` per consumer
/// loop (its turns block in `poll` for a few milliseconds when idle).
package struct DispatchExecutor: Executor {
    package let pool: any WorkQueue
    private let poolQueue: DispatchQueue

    /// An executor whose pool is a new concurrent queue named `poolLabel`.
    package init(poolLabel: String = "provisioner.workers") {
        poolQueue = DispatchQueue(label: poolLabel, qos: .userInitiated, attributes: .concurrent)
        pool = DispatchWorkQueue(queue: poolQueue)
    }

    package func serialQueue(label: String, onPool: Bool) -> any WorkQueue {
        DispatchWorkQueue(queue: onPool ? DispatchQueue(label: label, target: poolQueue) : DispatchQueue(label: label))
    }

    package func timer(label: String) -> any WorkTimer {
        DispatchTimer(label: label)
    }

    package func startLoop(name: String, turn: @escaping @Sendable () -> Bool) -> any LoopHandle {
        let thread = PollThread()
        thread.start(name: name) {
            while turn() {}
        }
        return thread
    }
}

/// A `WorkQueue` over a Dispatch queue.
package struct DispatchWorkQueue: WorkQueue {
    let queue: DispatchQueue

    package func async(_ work: @escaping @Sendable () -> Void) {
        queue.async(execute: work)
    }

    package func asyncAfter(milliseconds: Int64, _ work: @escaping @Sendable () -> Void) {
        queue.asyncAfter(deadline: .now() + .milliseconds(Int(max(0, min(milliseconds, Int64(Int32.max))))), execute: work)
    }

    package func sync(_ work: @Sendable () -> Void) {
        queue.sync(execute: work)
    }
}
