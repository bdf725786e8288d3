import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The shared test helpers: processes must be observable, controllable, and never leak.
@Suite("ChildProcess and BuiltProducts", .timeLimit(.minutes(5)))
struct ChildProcessTests {
    @Test("output arrives line by line per stream, with the exit status")
    func outputAndStatus() async throws {
        let process = try ChildProcess(executable: "/bin/sh",
                                       arguments: ["-c", "echo one; echo two >&2; echo \"$GREETING\"; printf partial; exit 3"],
                                       environment: ["GREETING": "hello"])
        #expect(try await process.waitForExit() == .exited(3))
        try await process.waitForLine(prefix: "partial")
        #expect(process.standardOutputLines == ["one", "hello", "partial"])
        #expect(process.standardErrorLines == ["two"])
    }

    @Test("standard input is delivered, then closed")
    func standardInput() async throws {
        let process = try ChildProcess(executable: "cat", standardInput: Array("a\nb\n".utf8))
        #expect(try await process.waitForExit() == .exited(0))
        #expect(process.standardOutputLines == ["a", "b"])
    }

    @Test("signals end the child; waiting for a line that never comes times out with the child's stderr")
    func signalsAndTimeouts() async throws {
        let process = try ChildProcess(executable: "/bin/sh", arguments: ["-c", "echo started >&2; exec sleep 30"])
        try await process.waitForLine(prefix: "started", in: .standardError)
        let error = await #expect(throws: ChildProcessError.self) {
            try await process.waitForLine(prefix: "never", timeout: .milliseconds(100))
        }
        #expect(error?.message.contains("started") == true)
        process.terminate()
        #expect(try await process.waitForExit() == .signaled(SIGTERM))
        process.kill()
    }

    @Test("a child is killed when its ChildProcess goes away")
    func killedOnDeinit() async throws {
        var process: ChildProcess? = try ChildProcess(executable: "sleep", arguments: ["30"])
        let pid = try #require(process?.pid)
        #expect(kill(pid, 0) == 0)
        process = nil
        #expect(try await waitUntilGone(pid))
    }

    @Test("a missing executable is reported clearly")
    func missingExecutable() throws {
        let error = #expect(throws: ChildProcessError.self) { _ = try ChildProcess(executable: "no-such-tool-\(getpid())") }
        #expect(error?.message.contains("PATH") == true)
        #expect(throws: TestSupportError.self) { _ = try BuiltProducts.path(of: "no-such-product") }
        #expect(FileManager.default.isExecutableFile(atPath: try BuiltProducts.provisionerPath))
    }

    private func waitUntilGone(_ pid: pid_t) async throws -> Bool {
        try await Eventually.holds(within: .seconds(10)) { kill(pid, 0) != 0 && errno == ESRCH }
    }
}
