import Dispatch
import HTTP
import Pipeline
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
        usage: provisioner simulator [--listen HOST:PORT] [--profile FILE] [--exit-with-parent]

        serves the issuer simulator on one port: /imprint, /dcs, /gnosis, /worldpay and the /_sim
        control endpoints (calls, reset, profile). Prints 'simulator listening on http://HOST:PORT'
        once it accepts connections and runs until SIGINT or SIGTERM (exit 0).

        options:
          --listen HOST:PORT   address to listen on (default 127.0.0.1:8081; port 0 picks a free one;
                               IPv6 as [::1]:8081). /_sim has no authentication: keep it on loopback.
          --profile FILE       load profile (JSON): latency, error and hang rates for cards without a
                               magic suffix, extra programs; see Config/simulator-profile.json and
                               docs/SIMULATOR.md. Replace it at run time with POST /_sim/profile.
          --exit-with-parent   also stop when the process that started it ends

        programs known without a profile: demo-imprint (sim-imprint-key), demo-dcs (sim-dcs-key,
        secret sim-dcs-secret), demo-gnosis (sim-gnosis-token), demo-worldpay (sim-worldpay-key).
        """

    static let switchNames: Set<String> = ["exit-with-parent"]

    static func run(_ arguments: inout CommandArguments) throws -> Int32 {
        let listen = arguments.option("listen") ?? "127.0.0.1:8081"
        let profilePath = arguments.option("profile")
        let exitWithParent = arguments.flag("exit-with-parent")
        try arguments.rejectUnknown()
        guard let address = HostPort(listen) else {
            throw UsageError("--listen must be HOST:PORT or [IPv6]:PORT, got '\(listen)'")
        }
        let (host, port) = (address.host, address.port)
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
        let stop = StopSignal(exitWithParent: exitWithParent)
        let shownHost = host.contains(":") ? "[\(host)]" : host
        writeStandardOutput("simulator listening on http://\(shownHost):\(simulator.port)\n")
        stop.wait()
        stop.cancel()
        simulator.stop()
        return 0
    }
}
