#if canImport(Glibc)
import Glibc
#endif

/// The URLs to scrape now: each configured URL as it is, except `dns+http://NAME:PORT/PATH`,
/// which becomes one URL per address NAME resolves to at this moment (a headless Service lists
/// every worker pod, so the console sees each worker, not whichever one a ClusterIP picks).
enum MetricsTargets {
    static let dnsPrefix = "dns+"

    static func expand(_ endpoints: [String]) -> [String] {
        endpoints.flatMap { endpoint -> [String] in
            guard endpoint.hasPrefix(dnsPrefix) else { return [endpoint] }
            let url = String(endpoint.dropFirst(dnsPrefix.count))
            guard let schemeEnd = url.range(of: "://") else { return [] }
            let scheme = url[..<schemeEnd.lowerBound]
            let rest = url[schemeEnd.upperBound...]
            let authority = rest.prefix { $0 != "/" }
            let path = rest.dropFirst(authority.count)
            guard let colon = authority.lastIndex(of: ":"), let port = UInt16(authority[authority.index(after: colon)...]) else { return [] }
            let host = String(authority[..<colon])
            return addresses(of: host).map { address in
                "\(scheme)://\(address.contains(":") ? "[\(address)]" : address):\(port)\(path.isEmpty ? "/metrics" : String(path))"
            }
        }
    }

    /// Every distinct address `host` resolves to (numeric text), sorted.
    static func addresses(of host: String) -> [String] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var results: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &results) == 0 else { return [] }
        defer { freeaddrinfo(results) }
        var found: Set<String> = []
        var cursor = results
        while let entry = cursor {
            var buffer = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            if let address = entry.pointee.ai_addr,
               getnameinfo(address, entry.pointee.ai_addrlen, &buffer, socklen_t(buffer.count), nil, 0, NI_NUMERICHOST) == 0 {
                found.insert(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
            }
            cursor = entry.pointee.ai_next
        }
        return found.sorted()
    }
}
