import HTTP

/// `HTTPClient` (libcurl multi, one event thread) as a `LoadClient`.
final class CurlLoadClient: LoadClient {
    private let client = HTTPClient()
    private let url: String

    init(url: String) {
        self.url = url
    }

    func post(body: [UInt8], delayMs: Int, timeoutMs: Int, completion: @escaping @Sendable (String?) -> Void) {
        var headers = [HTTPHeader(name: "Content-Type", value: "application/json")]
        if delayMs > 0 { headers.append(HTTPHeader(name: "X-Delay-Ms", value: String(delayMs))) }
        client.execute(HTTPClientRequest(method: "POST", url: url, headers: headers, body: body, timeoutMs: timeoutMs)) { result in
            switch result {
            case .success(let response):
                completion(response.status == 200 ? nil : "status \(response.status)")
            case .failure(let error):
                completion("\(error.kind)")
            }
        }
    }

    func close() {
        client.shutdown()
    }
}
