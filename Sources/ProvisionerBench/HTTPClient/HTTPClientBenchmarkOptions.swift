/// Knobs of `provisioner-bench http-client`; the defaults are the figures quoted in ENGINEERING.md.
public struct HTTPClientBenchmarkOptions: Sendable {
    /// Clients to compare: `curl` (HTTPClient) and/or `urlsession`.
    public var clients: [String]
    /// Burst phase: requests measured (after a warm-up of ten per connection).
    public var burstRequests: Int
    /// Burst phase: requests in flight.
    public var burstInFlight: Int
    /// Sustained phase: requests in flight.
    public var sustainedInFlight: Int
    /// Sustained phase: how long the server holds each answer.
    public var sustainedDelayMs: Int
    /// Sustained phase: total seconds; figures come from the window after the first two seconds.
    public var sustainedSeconds: Int
    /// Request body size in bytes.
    public var bodyBytes: Int

    /// Creates options.
    public init(clients: [String] = ["curl", "urlsession"], burstRequests: Int = 5_000, burstInFlight: Int = 64,
                sustainedInFlight: Int = 2_000, sustainedDelayMs: Int = 1_000, sustainedSeconds: Int = 8, bodyBytes: Int = 2_048) {
        self.clients = clients
        self.burstRequests = burstRequests
        self.burstInFlight = burstInFlight
        self.sustainedInFlight = sustainedInFlight
        self.sustainedDelayMs = sustainedDelayMs
        self.sustainedSeconds = sustainedSeconds
        self.bodyBytes = bodyBytes
    }

    /// The options as command-line words, to hand to a child process.
    var arguments: [String] {
        ["--clients", clients.joined(separator: ","), "--requests", String(burstRequests), "--in-flight", String(burstInFlight),
         "--sustained-in-flight", String(sustainedInFlight), "--delay-ms", String(sustainedDelayMs),
         "--seconds", String(sustainedSeconds), "--body-bytes", String(bodyBytes)]
    }
}
