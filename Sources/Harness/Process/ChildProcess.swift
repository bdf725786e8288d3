import CPosix
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A child process for tests: started with `posix_spawn`, its output read line by line as it comes,
/// signalled and awaited with timeouts, and always killed when the object goes away, so a failing
/// test never leaks a process.
///
/// The child runs in its own process group with default signal dispositions and an empty signal
/// mask; its standard input is the given bytes (then end of file), or `/dev/null`. Output is kept in
/// memory (tests produce little).
public final class ChildProcess: Sendable {
    /// The child's process id.
    public let pid: pid_t
    /// The path that was started.
    public let executable: String
    /// The arguments it was given (without the program name).
    public let arguments: [String]

    private let shared: Shared

    /// Starts `executable` (a path, or a name looked up in `PATH`) with `arguments`; `environment`
    /// adds to or overrides the current process's environment; `standardInput`, when given, is
    /// written to the child's standard input, which is then closed.
    public init(executable: String, arguments: [String] = [], environment: [String: String] = [:],
                standardInput: [UInt8]? = nil) throws(ChildProcessError) {
        let path = try Self.resolve(executable)
        let started = try Self.spawn(path: path, arguments: arguments, environment: environment, withInput: standardInput != nil)
        self.pid = started.pid
        self.executable = path
        self.arguments = arguments
        self.shared = Shared(pid: started.pid)
        shared.startReading(started.output, stream: .standardOutput)
        shared.startReading(started.error, stream: .standardError)
        if let input = started.input {
            shared.startWriting(standardInput ?? [], to: input)
        }
        shared.startReaping()
    }

    private struct Started {
        var pid: pid_t
        var output: OwnedDescriptor
        var error: OwnedDescriptor
        var input: OwnedDescriptor?
    }

    /// Starts the child; returns its pid, the read ends of its stdout and stderr pipes and the write
    /// end of its stdin pipe (when `withInput`).
    ///
    /// Descriptors: the pipes are close-on-exec from creation (`pipe2`), and the child closes every
    /// descriptor from 3 up before `exec` (`posix_spawn_file_actions_addclosefrom_np`), so it gets
    /// its three standard streams and nothing else, whatever other threads (libmicrohttpd,
    /// librdkafka, libcurl, Foundation) have open without close-on-exec.
    private static func spawn(path: String, arguments: [String], environment: [String: String],
                              withInput: Bool) throws(ChildProcessError) -> Started {
        let failure = { ChildProcessError("pipe2 failed: \(String(cString: strerror(errno))); raise the open-file limit") }
        guard let output = OwnedDescriptor.makePipe(), let error = OwnedDescriptor.makePipe() else { throw failure() }
        let input = withInput ? OwnedDescriptor.makePipe() : nil
        if withInput && input == nil { throw failure() }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let input {
            posix_spawn_file_actions_adddup2(&actions, input.read.rawValue, 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        posix_spawn_file_actions_adddup2(&actions, output.write.rawValue, 1)
        posix_spawn_file_actions_adddup2(&actions, error.write.rawValue, 2)
        posix_spawn_file_actions_addclosefrom_np(&actions, 3)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var emptyMask = sigset_t()
        sigemptyset(&emptyMask)
        posix_spawnattr_setsigmask(&attributes, &emptyMask)
        var defaultSignals = sigset_t()
        sigemptyset(&defaultSignals)
        for signal in [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGCHLD, SIGUSR1, SIGUSR2] {
            sigaddset(&defaultSignals, signal)
        }
        posix_spawnattr_setsigdefault(&attributes, &defaultSignals)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))

        let argumentVector = ([path] + arguments).map { strdup($0) } + [nil]
        let environmentVector = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
            .map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argumentVector.forEach { free($0) }
            environmentVector.forEach { free($0) }
        }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, path, &actions, &attributes, argumentVector, environmentVector)
        // The child's ends: it has its own copies now (or never started). The parent's other ends
        // close with their owners if the spawn failed.
        output.write.close()
        error.write.close()
        input?.read.close()
        guard status == 0 else {
            throw ChildProcessError("could not start \(path): \(String(cString: strerror(status)))")
        }
        return Started(pid: pid, output: output.read, error: error.read, input: input?.write)
    }

    deinit {
        shared.killGroup()
    }

    /// The complete lines written to standard output so far.
    public var standardOutputLines: [String] { shared.lines(.standardOutput) }
    /// The complete lines written to standard error so far.
    public var standardErrorLines: [String] { shared.lines(.standardError) }
    /// How the child ended, or `nil` while it runs.
    public var termination: Termination? { shared.termination }

    /// Sends `signal` (SIGTERM, SIGINT, SIGKILL, ...) to the child; does nothing once it was reaped.
    public func send(_ signal: Int32) {
        shared.signal(signal, group: false)
    }

    /// Sends SIGTERM.
    public func terminate() { send(SIGTERM) }
    /// Sends SIGINT.
    public func interrupt() { send(SIGINT) }
    /// Sends SIGKILL to the child and its process group.
    public func kill() { shared.killGroup() }

    /// Waits for the first line in `stream` starting with `prefix` (earlier lines count too) and
    /// returns it; throws on timeout or when the stream ends first, quoting the child's stderr.
    @discardableResult
    public func waitForLine(prefix: String, in stream: Stream = .standardOutput,
                            timeout: Duration = .seconds(20)) async throws -> String {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while true {
            let (line, ended) = shared.firstLine(prefix: prefix, in: stream)
            if let line { return line }
            if ended {
                throw ChildProcessError("\(describe()) closed its \(stream) without a line starting with '\(prefix)'\(diagnostics())")
            }
            if clock.now >= deadline {
                throw ChildProcessError("\(describe()) wrote no line starting with '\(prefix)' to its \(stream) within \(timeout)\(diagnostics())")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Waits until the child has ended and returns how; throws on timeout (the child keeps running:
    /// `kill()` it or let the object go).
    @discardableResult
    public func waitForExit(timeout: Duration = .seconds(20)) async throws -> Termination {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while true {
            if let termination = shared.termination { return termination }
            if clock.now >= deadline {
                throw ChildProcessError("\(describe()) did not exit within \(timeout)\(diagnostics())")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    private func describe() -> String {
        "\((executable as NSString).lastPathComponent) \(arguments.joined(separator: " ")) (pid \(pid))"
    }

    private func diagnostics() -> String {
        let tail = standardErrorLines.suffix(20)
        return tail.isEmpty ? "" : "; its last stderr lines:\n" + tail.joined(separator: "\n")
    }

    private static func resolve(_ executable: String) throws(ChildProcessError) -> String {
        if executable.contains("/") {
            guard FileManager.default.isExecutableFile(atPath: executable) else {
                throw ChildProcessError("'\(executable)' is not an executable file")
            }
            return executable
        }
        let searchPath = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in searchPath.split(separator: ":") {
            let candidate = "\(directory)/\(executable)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw ChildProcessError("'\(executable)' was not found in PATH; install it (scripts/setup installs the test tools)")
    }
}
