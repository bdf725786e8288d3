import CCurl

// libcurl's multi-handle callbacks. They run on the client's event thread, inside
// `curl_multi_socket_action` / `curl_multi_add_handle`; `userp` is the unretained `CurlMultiLoop`,
// which outlives its multi handle.

/// `CURLMOPT_SOCKETFUNCTION`: libcurl says which events to wait for on a socket.
func curlSocketCallback(_ easy: UnsafeMutableRawPointer?, _ socket: curl_socket_t, _ what: Int32,
                        _ userp: UnsafeMutableRawPointer?, _ socketp: UnsafeMutableRawPointer?) -> Int32 {
    guard let userp else { return -1 }
    Unmanaged<CurlMultiLoop>.fromOpaque(userp).takeUnretainedValue().socketChanged(socket, what)
    return 0
}

/// `CURLMOPT_TIMERFUNCTION`: libcurl says when it next needs a timeout action.
func curlTimerCallback(_ multi: UnsafeMutableRawPointer?, _ timeoutMs: Int, _ userp: UnsafeMutableRawPointer?) -> Int32 {
    guard let userp else { return -1 }
    Unmanaged<CurlMultiLoop>.fromOpaque(userp).takeUnretainedValue().timerChanged(timeoutMs)
    return 0
}
