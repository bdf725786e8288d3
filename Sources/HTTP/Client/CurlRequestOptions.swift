import CCurl

/// Sets the easy-handle options for one request (event thread only).
enum CurlRequestOptions {
    /// Applies every option; returns the name of the first option libcurl refused, or nil.
    static func apply(to transfer: CurlTransfer, timeoutMs: Int, configuration: HTTPClientConfiguration) -> String? {
        let easy = transfer.easy
        let request = transfer.pending.request
        let context = Unmanaged.passUnretained(transfer).toOpaque()
        var failed: String?
        func check(_ code: CURLcode, _ name: String) {
            if code != CURLE_OK && failed == nil { failed = name }
        }
        func setLong(_ option: CURLoption, _ value: Int, _ name: String) {
            check(provisioner_curl_easy_setopt_long(easy, option, value), name)
        }
        func setString(_ option: CURLoption, _ value: String, _ name: String) {
            check(value.withCString { provisioner_curl_easy_setopt_string(easy, option, $0) }, name)
        }

        setString(CURLOPT_URL, request.url, "CURLOPT_URL (the URL is malformed)")
        setString(CURLOPT_PROTOCOLS_STR, "http,https", "CURLOPT_PROTOCOLS_STR")
        setLong(CURLOPT_NOSIGNAL, 1, "CURLOPT_NOSIGNAL")
        setLong(CURLOPT_TIMEOUT_MS, timeoutMs, "CURLOPT_TIMEOUT_MS")
        setLong(CURLOPT_CONNECTTIMEOUT_MS, max(1, min(configuration.connectTimeoutMs, timeoutMs)), "CURLOPT_CONNECTTIMEOUT_MS")
        setLong(CURLOPT_FOLLOWLOCATION, 0, "CURLOPT_FOLLOWLOCATION")
        setLong(CURLOPT_TCP_NODELAY, 1, "CURLOPT_TCP_NODELAY")
        setLong(CURLOPT_SSL_VERIFYPEER, configuration.verifyTLS ? 1 : 0, "CURLOPT_SSL_VERIFYPEER")
        setLong(CURLOPT_SSL_VERIFYHOST, configuration.verifyTLS ? 2 : 0, "CURLOPT_SSL_VERIFYHOST")
        if let path = configuration.caBundlePath { setString(CURLOPT_CAINFO, path, "CURLOPT_CAINFO") }
        if let path = configuration.clientCertificatePath { setString(CURLOPT_SSLCERT, path, "CURLOPT_SSLCERT") }
        if let path = configuration.clientKeyPath { setString(CURLOPT_SSLKEY, path, "CURLOPT_SSLKEY") }
        setLong(CURLOPT_MAXAGE_CONN, max(1, configuration.maxIdleSecondsBeforeReuse), "CURLOPT_MAXAGE_CONN")
        check(provisioner_curl_easy_setopt_off(easy, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(request.maxResponseBytes)), "CURLOPT_MAXFILESIZE_LARGE")
        setString(CURLOPT_PROXY, configuration.proxy ?? "", "CURLOPT_PROXY")
        check(provisioner_curl_easy_setopt_ptr(easy, CURLOPT_ERRORBUFFER, transfer.errorBuffer), "CURLOPT_ERRORBUFFER")
        check(provisioner_curl_easy_setopt_cloexec_sockets(easy), "CURLOPT_OPENSOCKETFUNCTION")
        check(provisioner_curl_easy_setopt_write(easy, curlWriteCallback), "CURLOPT_WRITEFUNCTION")
        check(provisioner_curl_easy_setopt_ptr(easy, CURLOPT_WRITEDATA, context), "CURLOPT_WRITEDATA")
        check(provisioner_curl_easy_setopt_header(easy, curlHeaderCallback), "CURLOPT_HEADERFUNCTION")
        check(provisioner_curl_easy_setopt_ptr(easy, CURLOPT_HEADERDATA, context), "CURLOPT_HEADERDATA")
        check(provisioner_curl_easy_setopt_prereq(easy, curlPrerequestCallback), "CURLOPT_PREREQFUNCTION")
        check(provisioner_curl_easy_setopt_ptr(easy, CURLOPT_PREREQDATA, context), "CURLOPT_PREREQDATA")

        // "Expect:" stops libcurl from waiting for `100 Continue` before large bodies.
        var list = curl_slist_append(nil, "Expect:")
        for header in request.headers {
            // libcurl sends "Name;" as a header with an empty value ("Name:" would remove it).
            let line = header.value.isEmpty ? "\(header.name);" : "\(header.name): \(header.value)"
            list = curl_slist_append(list, line)
        }
        transfer.headerList = list
        check(provisioner_curl_easy_setopt_slist(easy, CURLOPT_HTTPHEADER, list), "CURLOPT_HTTPHEADER")

        let method = request.method
        if method == "GET" && request.body.isEmpty {
            setLong(CURLOPT_HTTPGET, 1, "CURLOPT_HTTPGET")
        } else if method == "HEAD" && request.body.isEmpty {
            setLong(CURLOPT_NOBODY, 1, "CURLOPT_NOBODY")
        } else if method == "POST" || !request.body.isEmpty {
            setBody(transfer, check: check)
            if method != "POST" { setString(CURLOPT_CUSTOMREQUEST, method, "CURLOPT_CUSTOMREQUEST") }
        } else {
            setString(CURLOPT_CUSTOMREQUEST, method, "CURLOPT_CUSTOMREQUEST")
        }
        return failed
    }

    private static func setBody(_ transfer: CurlTransfer, check: (CURLcode, String) -> Void) {
        let body = transfer.pending.request.body
        let easy = transfer.easy
        check(provisioner_curl_easy_setopt_long(easy, CURLOPT_POST, 1), "CURLOPT_POST")
        check(provisioner_curl_easy_setopt_off(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count)), "CURLOPT_POSTFIELDSIZE_LARGE")
        // libcurl keeps the pointer, not the bytes: a copy owned by the transfer (one byte for an
        // empty body, which libcurl never reads but wants non-null).
        let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, body.count), alignment: 1)
        body.withUnsafeBytes { copy.copyMemory(from: $0) }
        transfer.bodyCopy = copy
        check(provisioner_curl_easy_setopt_ptr(easy, CURLOPT_POSTFIELDS, copy.baseAddress), "CURLOPT_POSTFIELDS")
    }
}
