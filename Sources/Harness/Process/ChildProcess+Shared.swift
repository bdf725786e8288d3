import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

extension ChildProcess {
    /// The state the reader and reaper threads share with the `ChildProcess` facade. The threads
    /// hold this object, never the facade, so dropping the facade still kills the child.
    final class Shared: Sendable {
        private struct State {
            var output: [String] = []
            var error: [String] = []
            var outputEnded = false
            var errorEnded = false
            var termination: Termination?
        }

        private let pid: pid_t
        private let state = Mutex(State())

        init(pid: pid_t) { self.pid = pid }

        func lines(_ stream: Stream) -> [String] {
            state.withLock { stream == .standardOutput ? $0.output : $0.error }
        }

        var termination: Termination? {
            state.withLock { $0.termination }
        }

        /// The first line with `prefix`, and whether the stream has ended.
        func firstLine(prefix: String, in stream: Stream) -> (String?, Bool) {
            state.withLock { state in
                let lines = stream == .standardOutput ? state.output : state.error
                let ended = stream == .standardOutput ? state.outputEnded : state.errorEnded
                return (lines.first { $0.hasPrefix(prefix) }, ended)
            }
        }

        /// Signals the child (or its whole process group) unless it was already reaped, so a recycled
        /// pid is never hit: reaping happens under the same lock.
        func signal(_ signal: Int32, group: Bool) {
            state.withLock { state in
                guard state.termination == nil else { return }
                _ = Glibc.kill(group ? -pid : pid, signal)
            }
        }

        func killGroup() {
            signal(SIGKILL, group: true)
            signal(SIGKILL, group: false)
        }

        func startReading(_ descriptor: OwnedDescriptor, stream: Stream) {
            let thread = Thread { [self] in
                var pending: [UInt8] = []
                var buffer = [UInt8](repeating: 0, count: 4096)
                while true {
                    let count = buffer.withUnsafeMutableBytes { read(descriptor.rawValue, $0.baseAddress, $0.count) }
                    if count < 0 && errno == EINTR { continue }
                    if count <= 0 { break }
                    pending.append(contentsOf: buffer[0..<count])
                    var lines: [String] = []
                    while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                        lines.append(Self.text(pending[..<newline]))
                        pending.removeSubrange(...newline)
                    }
                    if !lines.isEmpty { append(lines, to: stream) }
                }
                descriptor.close()
                let last = pending.isEmpty ? [] : [Self.text(pending[...])]
                state.withLock { state in
                    if stream == .standardOutput {
                        state.output += last
                        state.outputEnded = true
                    } else {
                        state.error += last
                        state.errorEnded = true
                    }
                }
            }
            thread.name = "child-\(pid)-\(stream)"
            thread.start()
        }

        /// Writes `bytes` to the child's standard input, then closes it. A child that exits without
        /// reading makes the write fail with EPIPE, which is ignored: SIGPIPE is set to be ignored in
        /// the test process (children get the default back at spawn).
        func startWriting(_ bytes: [UInt8], to descriptor: OwnedDescriptor) {
            _ = Glibc.signal(SIGPIPE, SIG_IGN)
            let thread = Thread {
                var offset = 0
                while offset < bytes.count {
                    let written = bytes[offset...].withUnsafeBytes { write(descriptor.rawValue, $0.baseAddress, $0.count) }
                    if written < 0 && errno == EINTR { continue }
                    guard written > 0 else { break }
                    offset += written
                }
                descriptor.close()
            }
            thread.name = "child-\(pid)-stdin"
            thread.start()
        }

        func startReaping() {
            let thread = Thread { [self] in
                // Wait without reaping, then reap under the lock that `signal` takes.
                var info = siginfo_t()
                while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR {}
                state.withLock { state in
                    var status: Int32 = 0
                    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                    state.termination = Termination(waitStatus: status)
                }
            }
            thread.name = "child-\(pid)-reaper"
            thread.start()
        }

        private func append(_ lines: [String], to stream: Stream) {
            state.withLock { state in
                if stream == .standardOutput { state.output += lines } else { state.error += lines }
            }
        }

        private static func text(_ bytes: ArraySlice<UInt8>) -> String {
            var line = String(decoding: bytes, as: UTF8.self)
            if line.hasSuffix("\r") { line.removeLast() }
            return line
        }
    }
}
