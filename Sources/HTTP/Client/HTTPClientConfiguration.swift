/// Settings shared by every request of one `HTTPClient`.
public struct HTTPClientConfiguration: Sendable {
    /// A PEM file of trusted CA certificates; nil uses the system bundle.
    public var caBundlePath: String?
    /// Verify the server certificate and host name. Leave on outside tests.
    public var verifyTLS: Bool
    /// A PEM client certificate for mutual TLS, if the server asks for one.
    public var clientCertificatePath: String?
    /// The PEM private key for `clientCertificatePath`.
    public var clientKeyPath: String?
    /// Most connections open at once to one host; 0 means no limit. Requests over the limit wait
    /// in libcurl's queue (their timeout keeps running).
    public var maxConnectionsPerHost: Int
    /// Most idle connections kept for reuse across all hosts.
    public var maxCachedConnections: Int
    /// Upper bound on connect (TCP and TLS) time; each request uses the smaller of this and its
    /// own `timeoutMs`.
    public var connectTimeoutMs: Int
    /// An idle connection older than this is not reused (keep it below the servers' keep-alive
    /// timeout so a request rarely meets a connection the server is closing).
    public var maxIdleSecondsBeforeReuse: Int
    /// A proxy URL; nil connects directly and ignores `http_proxy` and friends in the environment.
    public var proxy: String?

    /// Creates a configuration; the defaults suit an issuer client over HTTPS.
    public init(caBundlePath: String? = nil, verifyTLS: Bool = true, clientCertificatePath: String? = nil,
                clientKeyPath: String? = nil, maxConnectionsPerHost: Int = 0, maxCachedConnections: Int = 4096,
                connectTimeoutMs: Int = 5_000, maxIdleSecondsBeforeReuse: Int = 50, proxy: String? = nil) {
        self.caBundlePath = caBundlePath
        self.verifyTLS = verifyTLS
        self.clientCertificatePath = clientCertificatePath
        self.clientKeyPath = clientKeyPath
        self.maxConnectionsPerHost = maxConnectionsPerHost
        self.maxCachedConnections = maxCachedConnections
        self.connectTimeoutMs = connectTimeoutMs
        self.maxIdleSecondsBeforeReuse = maxIdleSecondsBeforeReuse
        self.proxy = proxy
    }
}
