import Contract
import HTTP

/// The `console` section of a configuration file (docs/CONFIGURATION.md, "Operator console"),
/// beside the worker's `kafka`, `group_id`, `topics` and `dlq` sections that the console reads too.
public struct ConsoleConfiguration: Sendable {
    /// Where to listen (`--listen` overrides); loopback unless told otherwise.
    public var listen = HostPort("127.0.0.1:8090")!
    /// The workers' `/metrics` URLs to scrape; `dns+http://NAME:PORT/metrics` scrapes every
    /// address NAME resolves to (a headless Service: every worker pod).
    public var metricsEndpoints: [String] = []
    /// How often to scrape them.
    public var scrapeIntervalMs: Int64 = 5_000
    /// How long a session lasts.
    public var sessionLifetimeMs: Int64 = 8 * 3_600_000
    /// The most replays per second an operator may ask for.
    public var maxReplayRate: Double = 50
    /// Per partition, how many of the newest records a request trace reads from each topic.
    public var traceScanLimit: Int64 = 200_000
    /// The access tokens.
    public var tokens: [ConsoleToken] = []

    /// Creates the defaults (no tokens: nobody can log in).
    public init() {}

    /// A problem in the `console` section, named by key path.
    public struct Problem: Error, Sendable, Equatable, CustomStringConvertible {
        /// e.g. `console.tokens[0].hash`.
        public var keyPath: String
        /// What is wrong.
        public var message: String
        public var description: String { "\(keyPath): \(message)" }
    }

    /// The keys of the `console` section.
    public static let keys: Set<String> = ["listen", "metrics", "scrape_interval_ms", "session_ttl_seconds", "max_replay_rate",
                                           "trace_scan_limit", "tokens"]
    /// The keys of each `console.tokens[]` entry.
    public static let tokenKeys: Set<String> = ["name", "role", "hash"]

    /// Reads the `console` section of the configuration file `text`.
    public static func parse(json text: String) throws(Problem) -> ConsoleConfiguration {
        let document: JSONValue
        do {
            document = try JSONParser().parse(text)
        } catch {
            throw Problem(keyPath: "(file)", message: "is not valid JSON")
        }
        guard let section = document["console"]?.objectValue else {
            throw Problem(keyPath: "console", message: "is required: listen, metrics and at least one token (see docs/CONFIGURATION.md)")
        }
        var configuration = ConsoleConfiguration()
        if let unknown = section.keys.sorted().first(where: { !keys.contains($0) }) {
            throw Problem(keyPath: "console.\(unknown)", message: "is not a known key (see docs/CONFIGURATION.md)")
        }
        if let listen = section["listen"] {
            guard let text = listen.stringValue, let parsed = HostPort(text) else {
                throw Problem(keyPath: "console.listen", message: "must be HOST:PORT, e.g. 127.0.0.1:8090")
            }
            configuration.listen = parsed
        }
        if let metrics = section["metrics"] {
            guard let list = metrics.arrayValue?.map(\.stringValue), list.allSatisfy({ $0 != nil }) else {
                throw Problem(keyPath: "console.metrics", message: "must be a list of URLs (http://HOST:PORT/metrics)")
            }
            configuration.metricsEndpoints = list.compactMap { $0 }
            if let bad = configuration.metricsEndpoints.first(where: { url in
                !["http://", "https://", "dns+http://", "dns+https://"].contains { url.hasPrefix($0) } }) {
                throw Problem(keyPath: "console.metrics", message: "'\(bad)' is not an http://, https:// or dns+http:// URL")
            }
        }
        configuration.scrapeIntervalMs = try integer(section, "scrape_interval_ms", default: 5_000, in: 500...600_000)
        configuration.sessionLifetimeMs = try integer(section, "session_ttl_seconds", default: 28_800, in: 60...604_800) * 1000
        configuration.traceScanLimit = try integer(section, "trace_scan_limit", default: 200_000, in: 100...100_000_000)
        if let rate = section["max_replay_rate"] {
            guard let value = rate.numberValue?.doubleValue, value >= 0.1, value <= 10_000 else {
                throw Problem(keyPath: "console.max_replay_rate", message: "must be a number from 0.1 to 10000 (replays per second)")
            }
            configuration.maxReplayRate = value
        }
        guard let tokens = section["tokens"]?.arrayValue, !tokens.isEmpty else {
            throw Problem(keyPath: "console.tokens", message: "must list at least one token: {name, role, hash} (hash from 'provisioner console hash-token')")
        }
        for (index, entry) in tokens.enumerated() {
            let path = "console.tokens[\(index)]"
            if let unknown = entry.objectValue?.keys.sorted().first(where: { !tokenKeys.contains($0) }) {
                throw Problem(keyPath: "\(path).\(unknown)", message: "is not a known key (name, role, hash)")
            }
            guard let name = entry["name"]?.stringValue, AuditEvent.safeIdentifier(name) == name, name != AuditEvent.invalidIdentifier else {
                throw Problem(keyPath: "\(path).name", message: "must be 1-64 of letters, digits and ._:@- (it is written into audit events)")
            }
            guard let roleText = entry["role"]?.stringValue, let role = ConsoleRole(rawValue: roleText) else {
                throw Problem(keyPath: "\(path).role", message: "must be viewer or replayer")
            }
            guard let hashText = entry["hash"]?.stringValue, let hash = TokenHash(stored: hashText) else {
                throw Problem(keyPath: "\(path).hash", message: "must be pbkdf2-sha256$ITERATIONS$SALT$HASH from 'provisioner console hash-token'")
            }
            if configuration.tokens.contains(where: { $0.name == name }) {
                throw Problem(keyPath: "\(path).name", message: "'\(name)' is listed twice")
            }
            configuration.tokens.append(ConsoleToken(name: name, role: role, hash: hash))
        }
        return configuration
    }

    private static func integer(_ section: [String: JSONValue], _ key: String, default fallback: Int64,
                                in range: ClosedRange<Int64>) throws(Problem) -> Int64 {
        guard let value = section[key] else { return fallback }
        guard let number = value.int64Value, range.contains(number) else {
            throw Problem(keyPath: "console.\(key)", message: "must be a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }
}
