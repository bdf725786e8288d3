import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `URLSession` (FoundationNetworking) as a `LoadClient`, configured to allow as many connections
/// per host as there are requests in flight.
final class URLSessionLoadClient: LoadClient, @unchecked Sendable {
    // @unchecked Sendable: URLSession is thread-safe; `url` is immutable.
    private let session: URLSession
    private let url: URL

    init(url: String, maxConnections: Int, timeoutSeconds: Double) {
        let configuration = URLSessionConfiguration.default
        configuration.httpMaximumConnectionsPerHost = maxConnections
        configuration.timeoutIntervalForRequest = timeoutSeconds
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        session = URLSession(configuration: configuration)
        self.url = URL(string: url)!
    }

    func post(body: [UInt8], delayMs: Int, timeoutMs: Int, completion: @escaping @Sendable (String?) -> Void) {
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.httpBody = Data(body)
        request.timeoutInterval = Double(timeoutMs) / 1000
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        if delayMs > 0 { request.setValue(String(delayMs), forHTTPHeaderField: "X-Delay-Ms") }
        session.dataTask(with: request) { _, response, error in
            if let error {
                let code = (error as NSError).code
                completion(code == NSURLErrorTimedOut ? "timedOut" : "URLError \(code)")
            } else {
                let status = (response as? HTTPURLResponse)?.statusCode ?? -1
                completion(status == 200 ? nil : "status \(status)")
            }
        }.resume()
    }

    func close() {
        session.invalidateAndCancel()
    }
}
