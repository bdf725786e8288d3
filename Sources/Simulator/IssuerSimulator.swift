import Contract
import HTTP

/// The issuer simulator: Imprint, DCS, Gnosis Pay and Worldpay over real HTTP on one port, with
/// magic cards, load profiles and the `/_sim` control endpoints (see `docs/SIMULATOR.md`).
///
/// ```swift
/// let simulator = try IssuerSimulator(host: "127.0.0.1", port: 0)
/// let base = "http://127.0.0.1:\(simulator.port)/imprint"
/// defer { simulator.stop() }
/// ```
/// Requests are answered on the HTTP server's polling threads; delayed answers (latency, `-slow-N`,
/// `-hang`) are sent from timers without holding a thread. All state is behind one mutex.
public final class IssuerSimulator: Sendable {
    private let engine: SimulatorEngine
    private let server: HTTPServer

    /// Starts serving on `host:port` (port 0 picks a free one; read `port`).
    public init(host: String = "127.0.0.1", port: UInt16 = 0, profile: SimulatorProfile = SimulatorProfile(),
                configuration: HTTPServerConfiguration = HTTPServerConfiguration()) throws(SimulatorError) {
        let engine = SimulatorEngine(profile: profile)
        let server: HTTPServer
        do {
            server = try HTTPServer(host: host, port: port, maxBodyBytes: 1 << 20, configuration: configuration) { request, responder in
                engine.handle(request, responder: responder)
            }
        } catch {
            throw SimulatorError(code: .listen, message: error.message)
        }
        engine.port.withLock { $0 = server.port }
        self.server = server
        self.engine = engine
    }

    /// The port the simulator listens on.
    public var port: UInt16 { server.port }

    /// Stops serving; answers still pending (slow or hanging) get 503. Idempotent.
    public func stop() {
        server.stop()
    }

    /// Forgets calls, used nonces, tokens, flaky cards and payments (as `POST /_sim/reset`); the
    /// profile and programs stay, and the profile's random sequence restarts from its seed.
    public func reset() {
        engine.state.withLock { $0.reset() }
    }

    /// Replaces the load profile and programs at run time (as `POST /_sim/profile`).
    public func replaceProfile(_ profile: SimulatorProfile) {
        engine.state.withLock { $0.replaceProfile(profile) }
    }

    /// The profile in force.
    public var profile: SimulatorProfile {
        engine.state.withLock { $0.profile }
    }

    /// The call log so far, in order of first call (as `GET /_sim/calls`).
    public var calls: [SimulatorCall] {
        engine.state.withLock { $0.calls }
    }

    /// The `traceparent` of every issuer request so far, oldest first (as `GET /_sim/traces`).
    public var receivedTraces: [ReceivedTrace] {
        engine.state.withLock { $0.traces.all }
    }

    /// The wallet state (as `GET /_sim/wallet`): every token held, oldest first.
    public var walletTokens: [SimulatorWalletToken] {
        engine.state.withLock { $0.allWalletTokens }
    }

    /// How many calls arrived in `[fromMs, toMs)` (epoch ms, the simulator's own clock, stamped
    /// as each request was received), among the newest `CallTimes.capacity` calls: rates
    /// measured where the issuer sees them.
    public func callCount(fromMs: Int64, toMs: Int64) -> Int {
        engine.state.withLock { $0.callTimes.count(fromMs: fromMs, toMs: toMs) }
    }
}
