import Dispatch
import HTTP
import Simulator
#if canImport(Glibc)
import Glibc
#endif

/// `provisioner simulator --listen HOST:PORT [--profile FILE]`: serves the issuer simulator until
/// SIGINT or SIGTERM.
enum SimulatorCommand: Command {
    static let name = "simulator"
    static let summary = "serves the issuer simulator (Imprint, DCS, Gnosis Pay, Worldpay)"
    static let help = """
        usage: provisioner simulator [--listen HOST:PORT] [--profile FILE]

        serves the issuer simulator on one port: /imprint, /dcs, /gnosis, /worldpay and the /_sim
        control endpoints (calls, reset, profile). Prints 'simulator listening on http://HOST:PORT'
        once it accepts connections and runs until SIGINT or SIGTERM (exit 0).

        options:
          --listen HOST:PORT   address to listen on (default 127.0.0.1:8081; port 0 picks a free one;
                               IPv6 as [::1]:8081). /_sim has no authentication: keep it on loopback.
          --profile FILE       load profile (JSON): latency, error and hang rates for cards without a
                               magic suffix, extra programs; see Config/simulator-profile.json and
                               docs/SIMULATOR.md. Replace it at run time with POST /_sim/profile.

        programs known without a profile: demo-imprint (sim-imprint-key), demo-dcs (sim-dcs-key,
        secret sim-dcs-secret), demo-gnosis (sim-gnosis-token), demo-worldpay (sim-worldpay-key).
        """

    static func run(_ arguments: inout CommandArguments) throws -> Int32 {
        let listen = arguments.option("listen") ?? "127.0.0.1:8081"
        let profilePath = arguments.option("profile")
        try arguments.rejectUnknown()
        let (host, port) = try parseListen(listen)
        var profile = SimulatorProfile()
        if let profilePath {
            do {
                profile = try SimulatorProfile.load(path: profilePath)
            } catch {
                throw CommandFailure("bad profile: \(error.message)")
            }
        }
        ResourceLimits.raiseOpenFileLimit()
        let simulator: IssuerSimulator
        do {
            simulator = try IssuerSimulator(host: host, port: port, profile: profile)
        } catch {
            throw CommandFailure(error.message)
        }
        let shownHost = host.contains(":") ? "[\(host)]" : host
        var line = "simulator listening on http://\(shownHost):\(simulator.port)\n"
        line.withUTF8 { bytes in _ = write(1, bytes.baseAddress, bytes.count) }

        let stopped = DispatchSemaphore(value: 0)
        var sources: [any DispatchSourceSignal] = []
        for signalNumber in [SIGINT, SIGTERM] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler { stopped.signal() }
            source.resume()
            sources.append(source)
        }
        stopped.wait()
        for source in sources { source.cancel() }
        simulator.stop()
        return 0
    }

    /// Splits `HOST:PORT` (`[v6]:PORT` for IPv6).
    static func parseListen(_ text: String) throws(UsageError) -> (String, UInt16) {
        var host: Substring
        var portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else {
                throw UsageError("--listen must be HOST:PORT or [IPv6]:PORT, got '\(text)'")
            }
            host = text[text.index(after: text.startIndex)..<close]
            portText = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":") else { throw UsageError("--listen must be HOST:PORT, got '\(text)'") }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        guard !host.isEmpty, let port = UInt16(portText) else {
            throw UsageError("--listen must be HOST:PORT with a port from 0 to 65535, got '\(text)'")
        }
        return (String(host), port)
    }
}
