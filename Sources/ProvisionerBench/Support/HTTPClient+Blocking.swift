import Dispatch
import HTTP
import Synchronization

extension HTTPClient {
    /// Runs one request and waits for it (tools and benchmarks only, never on a hot path).
    func executeBlocking(_ request: HTTPClientRequest) -> Result<HTTPClientResponse, HTTPTransportError> {
        let done = DispatchSemaphore(value: 0)
        let box = Mutex<Result<HTTPClientResponse, HTTPTransportError>?>(nil)
        execute(request) { result in
            box.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return box.withLock { $0! }
    }
}
