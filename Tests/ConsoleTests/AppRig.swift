@testable import Console
import Contract
import HTTP
import Observability
import Pipeline
import TestSupport

/// A console application with two tokens and no reachable Kafka or metrics (for the checks that
/// refuse before anything is read).
final class AppRig: Sendable {
    static let aliceToken = "alice-token-0123456789"
    static let viewerToken = "victor-token-0123456789"
    let logs = CapturingLogHandler()
    let context: ConsoleContext
    let app: ConsoleApp

    init() {
        var configuration = ConsoleConfiguration()
        configuration.tokens = [
            ConsoleToken(name: "alice", role: .replayer, hash: TokenHash(token: Self.aliceToken, iterations: TokenHash.minimumIterations)),
            ConsoleToken(name: "victor", role: .viewer, hash: TokenHash(token: Self.viewerToken, iterations: TokenHash.minimumIterations)),
        ]
        context = ConsoleContext(kafka: ["bootstrap.servers": "127.0.0.1:1"], topics: TopicNames(), groupID: "g", configuration: configuration,
                                 replayKeys: nil, logger: Logger(label: "console", minimumLevel: .debug, handler: logs),
                                 monitor: MetricsMonitor(endpoints: [], intervalMs: 1_000))
        app = ConsoleApp(context: context)
    }

    func stop() { context.monitor.stop() }

    func loginRequest(token: String, cookie: String, field: String) -> HTTPServerRequest {
        HTTPServerRequest(method: "POST", path: "/login", headers: [HTTPHeader(name: "Cookie", value: "__Host-console_login=\(cookie)")],
                          body: Array("token=\(token)&login_csrf=\(field)".utf8))
    }

    /// The value a response's `Set-Cookie` gives `name`.
    static func cookie(_ response: HTTPServerResponse, _ name: String) -> String? {
        for header in response.headers where header.name == "Set-Cookie" && header.value.hasPrefix(name + "=") {
            let value = header.value.dropFirst(name.count + 1).prefix { $0 != ";" }
            if !value.isEmpty { return String(value) }
        }
        return nil
    }
}
