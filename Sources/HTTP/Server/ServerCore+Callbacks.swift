import CMicroHTTPD
#if canImport(Glibc)
import Glibc
#endif

// libmicrohttpd's C callbacks. They run on the daemon's polling threads; `cls` is the unretained
// `ServerCore`, and a connection's request context holds a retained `ServerExchange`.

/// `MHD_AccessHandlerCallback`: called with the headers, then with body chunks, then once with no
/// data (body complete), and again after each `MHD_resume_connection`.
func mhdAccessHandler(_ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?, _ url: UnsafePointer<CChar>?,
                      _ method: UnsafePointer<CChar>?, _ version: UnsafePointer<CChar>?, _ uploadData: UnsafePointer<CChar>?,
                      _ uploadDataSize: UnsafeMutablePointer<Int>?,
                      _ requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?) -> MHD_Result {
    guard let cls, let connection, let uploadDataSize, let requestContext else { return .NO }
    let core = Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
    guard let context = requestContext.pointee else {
        // Headers received: create the exchange; reject a declared oversize body before reading it.
        let exchange = ServerExchange(id: core.nextExchangeID(), connection: connection, core: core)
        requestContext.pointee = Unmanaged.passRetained(exchange).toOpaque()
        if let declared = MHD_lookup_connection_value(connection, .HEADER_KIND, "Content-Length"),
           let length = Int(String(cString: declared).trimmingHTTPWhitespace()), length > core.maxBodyBytes {
            exchange.stage = .answeredByServer
            return ServerCore.queue(ServerCore.tooLarge(core.maxBodyBytes), on: connection)
        }
        return .YES
    }
    let exchange = Unmanaged<ServerExchange>.fromOpaque(context).takeUnretainedValue()
    let chunkSize = uploadDataSize.pointee
    if chunkSize > 0 {
        if exchange.stage == .receiving && !exchange.bodyTooLarge, let uploadData {
            if exchange.body.count + chunkSize > core.maxBodyBytes {
                exchange.bodyTooLarge = true
                exchange.body = []
            } else {
                exchange.body.append(contentsOf: UnsafeRawBufferPointer(start: uploadData, count: chunkSize))
            }
        }
        uploadDataSize.pointee = 0
        return .YES
    }
    let path = url.map { String(cString: $0) } ?? "/"
    let methodName = method.map { String(cString: $0) } ?? ""
    return core.requestComplete(exchange, path: path, method: methodName)
}

/// `MHD_RequestCompletedCallback`: the request is over (answered, failed or the daemon is stopping).
/// After this the connection may be freed: mark the exchange finished and drop libmicrohttpd's reference.
func mhdRequestCompleted(_ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?,
                         _ requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
                         _ reason: MHD_RequestTerminationCode) {
    guard let cls, let requestContext, let context = requestContext.pointee else { return }
    requestContext.pointee = nil
    let core = Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
    let exchange = Unmanaged<ServerExchange>.fromOpaque(context).takeRetainedValue()
    exchange.answerState.withLock { $0.finish() }
    core.lifecycle.withLock { $0.unregister(id: exchange.id) }
}

/// `MHD_AcceptPolicyCallback`: refuses connections once the server is stopping (libmicrohttpd
/// closes a refused connection at once).
func mhdAcceptPolicy(_ cls: UnsafeMutableRawPointer?, _ address: UnsafePointer<sockaddr>?, _ length: socklen_t) -> MHD_Result {
    guard let cls else { return .NO }
    let core = Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
    return core.lifecycle.withLock { $0.isStopping } ? .NO : .YES
}

/// `MHD_PanicCallback`: libmicrohttpd found its own state broken. Says where and with which errno
/// (a closed descriptor shows as EBADF, a race on the epoll set as ENOENT), then aborts.
func mhdPanic(_ cls: UnsafeMutableRawPointer?, _ file: UnsafePointer<CChar>?, _ line: UInt32, _ reason: UnsafePointer<CChar>?) {
    let code = errno
    let place = file.map { String(cString: $0) } ?? "?"
    let why = reason.map { String(cString: $0) } ?? ""
    let message = Array("libmicrohttpd panic at \(place):\(line) (errno \(code): \(String(cString: strerror(code)))): \(why)\n".utf8)
    _ = message.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
    abort()
}

/// `MHD_NotifyConnectionCallback`: counts accepted and open connections.
func mhdConnectionNotification(_ cls: UnsafeMutableRawPointer?, _ connection: OpaquePointer?,
                               _ socketContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
                               _ code: MHD_ConnectionNotificationCode) {
    guard let cls else { return }
    let core = Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
    if code == .CONNECTION_NOTIFY_STARTED {
        core.acceptedConnections.add(1, ordering: .relaxed)
        core.openConnections.add(1, ordering: .relaxed)
    } else if code == .CONNECTION_NOTIFY_CLOSED {
        core.openConnections.subtract(1, ordering: .relaxed)
    }
}

/// `MHD_KeyValueIterator` collecting headers into the `[HTTPHeader]` that `cls` points to.
func mhdCollectHeader(_ cls: UnsafeMutableRawPointer?, _ kind: MHD_ValueKind, _ key: UnsafePointer<CChar>?,
                      _ value: UnsafePointer<CChar>?) -> MHD_Result {
    guard let cls, let key else { return .YES }
    let headers = cls.assumingMemoryBound(to: [HTTPHeader].self)
    headers.pointee.append(HTTPHeader(name: String(cString: key), value: value.map { String(cString: $0) } ?? ""))
    return .YES
}

/// `MHD_KeyValueIterator` collecting query arguments into the `[String: String]` that `cls` points to.
func mhdCollectArgument(_ cls: UnsafeMutableRawPointer?, _ kind: MHD_ValueKind, _ key: UnsafePointer<CChar>?,
                        _ value: UnsafePointer<CChar>?) -> MHD_Result {
    guard let cls, let key else { return .YES }
    let arguments = cls.assumingMemoryBound(to: [String: String].self)
    let name = String(cString: key)
    if arguments.pointee[name] == nil {
        arguments.pointee[name] = value.map { String(cString: $0) } ?? ""
    }
    return .YES
}
