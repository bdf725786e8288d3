/// Knobs of `provisioner-bench http-client`; the defaults are the figures quoted in ENGINEERING.md.
struct HTTPClientBenchmarkOptions: Sendable {
    /// Clients to compare: `curl` (HTTPClient) and/or `urlsession`.
    var clients: [String]
    /// Burst phase: requests measured (after a warm-up of ten per connection).
    var burstRequests: Int
    /// Burst phase: requests in flight.
    var burstInFlight: Int
    /// Sustained phase: requests in flight.
    var sustainedInFlight: Int
    /// Sustained phase: how long the server holds each answer.
    var sustainedDelayMs: Int
    /// Sustained phase: total seconds; figures come from the window after the first two seconds.
    var sustainedSeconds: Int
    /// Request body size in bytes.
    var bodyBytes: Int

    /// Creates options.
    init(clients: [String] = ["curl", "urlsession"], burstRequests: Int = 5_000, burstInFlight: Int = 64,
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
