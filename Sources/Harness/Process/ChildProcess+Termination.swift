extension ChildProcess {
    /// How a child process ended.
    public enum Termination: Sendable, Hashable, CustomStringConvertible {
        /// It exited with this status.
        case exited(Int32)
        /// A signal ended it.
        case signaled(Int32)

        /// Decodes a `waitpid` status.
        init(waitStatus status: Int32) {
            let signal = status & 0x7f
            self = signal == 0 ? .exited((status >> 8) & 0xff) : .signaled(signal)
        }

        /// `exit status N` or `signal N`.
        public var description: String {
            switch self {
            case .exited(let status): "exit status \(status)"
            case .signaled(let signal): "signal \(signal)"
            }
        }
    }

    /// One of the child's output streams.
    public enum Stream: Sendable, Hashable, CustomStringConvertible {
        /// Standard output.
        case standardOutput
        /// Standard error.
        case standardError

        /// `stdout` or `stderr`.
        public var description: String {
            self == .standardOutput ? "stdout" : "stderr"
        }
    }
}
