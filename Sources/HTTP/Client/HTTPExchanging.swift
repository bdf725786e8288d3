/// Whatever can run one HTTP exchange with a completion: `HTTPClient` (libcurl) in production;
/// the deterministic simulation's issuer in tests. `completion` runs exactly once.
public protocol HTTPExchanging: Sendable {
    /// Starts `request`; `completion` gets the answer or the failure, once.
    func execute(_ request: HTTPClientRequest, completion: @escaping @Sendable (Result<HTTPClientResponse, HTTPTransportError>) -> Void)
}

extension HTTPClient: HTTPExchanging {}
