#if canImport(Glibc)
import Glibc
#endif

/// A resolved socket address to listen on.
struct ListenAddress {
    private var storage = sockaddr_storage()
    /// True for an IPv6 address.
    private(set) var isIPv6 = false
    /// True for the IPv6 wildcard `::` (then IPv4 is served too).
    private(set) var isIPv6Wildcard = false

    /// Resolves `host` (an IP literal or a local name; "" or "*" mean all IPv4 interfaces).
    init(host: String, port: UInt16) throws(HTTPServerError) {
        let node = (host.isEmpty || host == "*") ? "0.0.0.0" : host
        var hints = addrinfo()
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var results: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(node, String(port), &hints, &results)
        guard status == 0, let first = results, let address = first.pointee.ai_addr else {
            let reason = status == 0 ? "no address" : String(cString: gai_strerror(status))
            throw HTTPServerError(kind: .invalidAddress,
                                  message: "cannot listen on host '\(host)' (\(reason)); give an IP address of this machine, 0.0.0.0 or ::")
        }
        defer { freeaddrinfo(results) }
        let length = min(Int(first.pointee.ai_addrlen), MemoryLayout<sockaddr_storage>.size)
        withUnsafeMutableBytes(of: &storage) { target in
            target.copyMemory(from: UnsafeRawBufferPointer(start: address, count: length))
        }
        isIPv6 = first.pointee.ai_family == AF_INET6
        isIPv6Wildcard = isIPv6 && node == "::"
    }

    /// Calls `body` with a pointer to the `sockaddr`.
    func withSocketAddress<Result>(_ body: (UnsafePointer<sockaddr>) -> Result) -> Result {
        withUnsafeBytes(of: storage) { raw in
            body(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self))
        }
    }
}
