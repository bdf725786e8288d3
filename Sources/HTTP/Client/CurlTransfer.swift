import CCurl

/// One request while libcurl works on it: the easy handle's options, buffers and what happened.
///
/// Lives on the client's event thread only: created there from a `PendingRequest`, handed to the
/// C callbacks (which libcurl runs inside `curl_multi_socket_action` on that thread) as an unretained
/// pointer, and finished there. `CurlMultiLoop.transfers` keeps it alive meanwhile.
final class CurlTransfer {
    let pending: PendingRequest
    let easy: UnsafeMutableRawPointer
    /// Header list handed to `CURLOPT_HTTPHEADER`; freed in `deinit`.
    var headerList: UnsafeMutablePointer<curl_slist>?
    /// A stable copy of the body for `CURLOPT_POSTFIELDS` (libcurl does not copy it); freed in `deinit`.
    var bodyCopy: UnsafeMutableRawBufferPointer?
    /// `CURLOPT_ERRORBUFFER`: libcurl's detailed reason for a failure.
    let errorBuffer: UnsafeMutablePointer<CChar>
    var responseHeaders: [HTTPHeader] = []
    var responseBody: [UInt8] = []
    /// Set by the write callback when the body went over `maxResponseBytes`.
    var exceededResponseLimit = false
    /// How many times libcurl was about to send the request (`CURLOPT_PREREQFUNCTION` calls).
    /// Zero proves the request never left; a second attempt (libcurl resending on a fresh
    /// connection after a reused one died) is refused, because the client must never retry.
    var sendAttempts = 0

    init(pending: PendingRequest, easy: UnsafeMutableRawPointer) {
        self.pending = pending
        self.easy = easy
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
    }

    deinit {
        if let headerList { curl_slist_free_all(headerList) }
        bodyCopy?.deallocate()
        errorBuffer.deallocate()
    }

    /// libcurl's detailed error text, or its generic text for `code`.
    func errorDetail(for code: CURLcode) -> String {
        let detail = String(cString: errorBuffer)
        return detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail
    }

    /// Records one response header line (status lines start a new header block).
    func receiveHeaderLine(_ bytes: UnsafeRawBufferPointer) {
        var end = bytes.count
        while end > 0 && (bytes[end - 1] == 0x0A || bytes[end - 1] == 0x0D) { end -= 1 }
        guard end > 0 else { return }
        let line = UnsafeRawBufferPointer(rebasing: bytes[0..<end])
        if line.starts(with: "HTTP/".utf8) {
            // A new status line: 1xx interim answers and their headers are discarded.
            responseHeaders.removeAll(keepingCapacity: true)
            return
        }
        if line[0] == 0x20 || line[0] == 0x09, !responseHeaders.isEmpty {
            // Obsolete line folding: continue the previous value.
            responseHeaders[responseHeaders.count - 1].value += " " + String(decoding: line, as: UTF8.self).trimmingHTTPWhitespace()
            return
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return }
        let name = String(decoding: UnsafeRawBufferPointer(rebasing: line[0..<colon]), as: UTF8.self)
        // Trimmed (spaces and tabs) on the bytes, so the value string is made once.
        var valueStart = colon + 1
        var valueEnd = line.endIndex
        while valueStart < valueEnd, line[valueStart] == UInt8(ascii: " ") || line[valueStart] == UInt8(ascii: "\t") { valueStart += 1 }
        while valueEnd > valueStart, line[valueEnd - 1] == UInt8(ascii: " ") || line[valueEnd - 1] == UInt8(ascii: "\t") { valueEnd -= 1 }
        let value = String(decoding: UnsafeRawBufferPointer(rebasing: line[valueStart..<valueEnd]), as: UTF8.self)
        responseHeaders.append(HTTPHeader(name: name, value: value))
        if HTTPHeader.namesEqual(name, "Content-Length"), let length = Int(value), length > 0 {
            responseBody.reserveCapacity(min(length, pending.request.maxResponseBytes))
        }
    }

    /// Appends body bytes; false (abort the transfer) once the body would exceed the limit.
    func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard responseBody.count + bytes.count <= pending.request.maxResponseBytes else {
            exceededResponseLimit = true
            return false
        }
        responseBody.append(contentsOf: bytes)
        return true
    }

    /// What the finished transfer gives its caller, libcurl having ended it with `code`: the
    /// response, or the transport error the code and what happened before it mean.
    func result(_ code: CURLcode) -> Result<HTTPClientResponse, HTTPTransportError> {
        let elapsedMs = MonotonicClock.millisecondsSince(pending.submittedAt)
        if code == CURLE_OK {
            var status = 0
            _ = provisioner_curl_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
            return .success(HTTPClientResponse(status: status, headers: responseHeaders,
                                               body: responseBody, elapsedMs: elapsedMs))
        }
        var pretransfer: curl_off_t = 0
        _ = provisioner_curl_easy_getinfo_off(easy, CURLINFO_PRETRANSFER_TIME_T, &pretransfer)
        return .failure(CurlErrorClassifier.error(for: .init(
            code: code, sendAttempts: sendAttempts, pretransferMicroseconds: Int64(pretransfer),
            exceededResponseLimit: exceededResponseLimit, elapsedMs: elapsedMs,
            timeoutMs: pending.request.timeoutMs, maxResponseBytes: pending.request.maxResponseBytes,
            detail: errorDetail(for: code))))
    }
}
