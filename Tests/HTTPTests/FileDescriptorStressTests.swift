import Dispatch
import Foundation
import HTTP
import Synchronization
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

extension HTTPTests {
    /// Servers started and stopped under traffic while other threads spawn child processes and
    /// churn their own sockets: the paths that once aborted inside libmicrohttpd ("Failed to remove
    /// listen FD from epoll set") when suites ran in parallel.
    ///
    /// Three things would show a descriptor handled wrongly: the process aborting (libmicrohttpd
    /// panics when its listening socket is not where it left it), a sentinel socket found closed
    /// or replaced under its owner (someone closed a number twice), and a child process seeing any
    /// descriptor beyond 0, 1 and 2 (one leaked across exec without close-on-exec).
    @Suite struct FileDescriptorStress {
        /// Server cycles per cycling thread, and the wall-clock bound that ends the loops early on a
        /// busy machine (the iteration count reached is recorded).
        static let cyclesPerThread = 500
        static let wallClockLimit: Duration = .seconds(60)

        @Test(.timeLimit(.minutes(3)))
        func serverStartStopAndSpawnsConcurrently() async throws {
            ResourceLimits.raiseOpenFileLimit()
            let stop = Atomic<Bool>(false)
            let cycles = Atomic<Int>(0)
            let spawns = Atomic<Int>(0)
            let sentinelChecks = Atomic<Int>(0)
            let problems = Mutex<[String]>([])
            let record: @Sendable (String) -> Void = { message in problems.withLock { if $0.count < 20 { $0.append(message) } } }
            let finished = Atomic<Int>(0)
            var threads = 0

            // Two threads start a server, put requests in flight (immediate and delayed answers),
            // and stop it while they are still going.
            for cycler in 0..<2 {
                threads += 1
                Thread.detachNewThread {
                    defer { finished.add(1, ordering: .relaxed) }
                    let client = HTTPClient()
                    defer { client.shutdown() }
                    let delays = DispatchQueue(label: "stress-delays-\(cycler)")
                    for _ in 0..<Self.cyclesPerThread where !stop.load(ordering: .relaxed) {
                        do {
                            try Self.cycleServer(client: client, delays: delays)
                            cycles.add(1, ordering: .relaxed)
                        } catch {
                            record("server cycle failed: \(error)")
                        }
                    }
                }
            }
            // One thread spawns children with pipes of their own (posix_spawn, `ChildProcess`).
            // Not through Foundation.Process: swift-corelibs-foundation's `findMaximumOpenFD`
            // copies a whole 256-byte `d_name` out of each `/proc/self/fd` entry readdir returns,
            // past the record's end, so with about 1,365 descriptors open (the 32 KiB getdents
            // buffer full) the copy of the last entry can run off the buffer's last page: SIGSEGV
            // inside `Process.run()` (seen once in CI at fds 1354/1355, crash address page-aligned).
            threads += 1
            Thread.detachNewThread {
                defer { finished.add(1, ordering: .relaxed) }
                while !stop.load(ordering: .relaxed) {
                    do {
                        let child = try ChildProcess(executable: "/bin/true")
                        let deadline = Waiting.now() + 20_000
                        while child.termination == nil && Waiting.now() < deadline { usleep(1_000) }
                        if child.termination == nil {
                            record("a spawned /bin/true did not exit within 20 s")
                        } else {
                            spawns.add(1, ordering: .relaxed)
                        }
                    } catch {
                        record("spawning a child failed: \(error)")
                    }
                }
            }
            // One thread keeps sockets of its own open for a moment and checks each is still its own
            // when it closes it: a double close elsewhere that hits one of these numbers shows here.
            threads += 1
            Thread.detachNewThread {
                defer { finished.add(1, ordering: .relaxed) }
                while !stop.load(ordering: .relaxed) {
                    if let problem = Self.checkSentinelSocket() { record(problem) }
                    sentinelChecks.add(1, ordering: .relaxed)
                }
            }

            // This task spawns children through ChildProcess and asks each which descriptors it has.
            let clock = ContinuousClock()
            let deadline = clock.now.advanced(by: Self.wallClockLimit)
            var inspected = 0
            while cycles.load(ordering: .relaxed) < 2 * Self.cyclesPerThread && clock.now < deadline
                    && finished.load(ordering: .relaxed) < 2 {
                let child = try ChildProcess(executable: "/bin/sh", arguments: ["-c", "ls /proc/self/fd; echo end"])
                try await child.waitForLine(prefix: "end", timeout: .seconds(20))
                let inherited = child.standardOutputLines.dropLast().compactMap { Int($0) }.filter { $0 > 3 }
                // 0-2 are the standard streams, 3 is `ls`'s own directory handle.
                if !inherited.isEmpty {
                    record("a child inherited \(inherited.count) descriptors beyond its standard streams, e.g. \(inherited.prefix(8))")
                }
                try await child.waitForExit()
                inspected += 1
                spawns.add(1, ordering: .relaxed)
            }
            stop.store(true, ordering: .relaxed)
            #expect(await Waiting.until(timeoutMs: 60_000) { finished.load(ordering: .relaxed) == threads })

            let found = problems.withLock { $0 }
            print("fd stress: \(cycles.load(ordering: .relaxed)) server cycles, \(spawns.load(ordering: .relaxed)) spawns "
                  + "(\(inspected) inspected), \(sentinelChecks.load(ordering: .relaxed)) sentinel checks")
            #expect(found.isEmpty, "\(found)")
            #expect(cycles.load(ordering: .relaxed) >= 50, "too few server cycles ran to mean anything")
        }

        /// One server life: start, requests in flight, stop under them, every request ends.
        static func cycleServer(client: HTTPClient, delays: DispatchQueue) throws {
            let server = try HTTPServer(host: "127.0.0.1", port: 0,
                                        configuration: HTTPServerConfiguration(stopDrainMilliseconds: 50)) { request, responder in
                if request.path == "/later" {
                    delays.asyncAfter(deadline: .now() + .microseconds(Int.random(in: 0...2_000))) {
                        responder.respond(.text(200, "later"))
                    }
                } else {
                    responder.respond(.text(200, "now"))
                }
            }
            let requests = 24
            let ended = Atomic<Int>(0)
            for index in 0..<requests {
                let path = index.isMultiple(of: 3) ? "/later" : "/now"
                client.execute(HTTPClientRequest(method: "GET", url: Fixtures.url(server, path), timeoutMs: 5_000)) { _ in
                    ended.add(1, ordering: .relaxed)
                }
            }
            // Stop while answers are going out: once some requests have ended (so connections are
            // open and the polling threads busy), at a random point after that.
            let busy = Waiting.now() + 2_000
            while ended.load(ordering: .relaxed) < requests / 4 && Waiting.now() < busy { usleep(100) }
            usleep(UInt32.random(in: 0...300))
            server.stop()
            let deadline = Waiting.now() + 10_000
            while ended.load(ordering: .relaxed) < requests && Waiting.now() < deadline { usleep(500) }
            guard ended.load(ordering: .relaxed) == requests else {
                throw StressFailure("\(requests - ended.load(ordering: .relaxed)) requests never ended after the server stopped")
            }
        }

        /// Opens a bound UDP socket, holds it briefly, and checks it is still the same socket and
        /// closes cleanly; a description of the problem otherwise.
        static func checkSentinelSocket() -> String? {
            let descriptor = socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard descriptor >= 0 else { return "sentinel socket() failed: errno \(errno)" }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else {
                close(descriptor)
                return "sentinel bind() failed: errno \(errno)"
            }
            let port = localPort(descriptor)
            usleep(200)
            if localPort(descriptor) != port {
                return "sentinel socket \(descriptor) was closed or replaced under its owner"
            }
            if close(descriptor) != 0 {
                return "closing sentinel socket \(descriptor) failed (errno \(errno)): someone else closed it"
            }
            return nil
        }

        private static func localPort(_ descriptor: Int32) -> UInt16? {
            var address = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let named = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
            }
            return named == 0 && address.sin_family == sa_family_t(AF_INET) ? address.sin_port : nil
        }

        struct StressFailure: Error, CustomStringConvertible {
            var description: String
            init(_ description: String) { self.description = description }
        }
    }
}
