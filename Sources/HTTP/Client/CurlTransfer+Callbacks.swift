import CCurl

// libcurl's C callbacks. They run on the client's event thread inside `curl_multi_socket_action`;
// `userdata` is an unretained `CurlTransfer` kept alive by `CurlMultiLoop.transfers`.

/// `CURLOPT_WRITEFUNCTION`: appends body bytes; returning less than given aborts the transfer.
func curlWriteCallback(_ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int,
                       _ userdata: UnsafeMutableRawPointer?) -> Int {
    guard let userdata else { return 0 }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue()
    let length = size * count
    guard length > 0, let data else { return length }
    return transfer.receiveBody(UnsafeRawBufferPointer(start: data, count: length)) ? length : 0
}

/// `CURLOPT_HEADERFUNCTION`: one header line per call, status lines included.
func curlHeaderCallback(_ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int,
                        _ userdata: UnsafeMutableRawPointer?) -> Int {
    guard let userdata else { return 0 }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue()
    let length = size * count
    if length > 0, let data {
        transfer.receiveHeaderLine(UnsafeRawBufferPointer(start: data, count: length))
    }
    return length
}

/// `CURLOPT_PREREQFUNCTION`: the connection is ready and the request is about to be written.
/// The first call marks the request as possibly sent; a second call is libcurl resending on a new
/// connection, which the client refuses (the issuer layer owns retries).
func curlPrerequestCallback(_ userdata: UnsafeMutableRawPointer?, _ remoteIP: UnsafeMutablePointer<CChar>?,
                            _ localIP: UnsafeMutablePointer<CChar>?, _ remotePort: Int32, _ localPort: Int32) -> Int32 {
    guard let userdata else { return CURL_PREREQFUNC_ABORT }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue()
    transfer.sendAttempts += 1
    return transfer.sendAttempts == 1 ? CURL_PREREQFUNC_OK : CURL_PREREQFUNC_ABORT
}
