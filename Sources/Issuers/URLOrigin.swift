/// The origin of an absolute `http`/`https` URL: scheme, host and port (RFC 6454), for deciding
/// whether a link returned by an issuer may be followed with our credentials.
///
/// Parsing is deliberately strict: user info (`user@host`), backslashes, whitespace, control
/// characters and non-ASCII bytes make a URL unusable rather than being interpreted.
struct URLOrigin: Sendable, Hashable {
    /// `http` or `https`, lowercased.
    var scheme: String
    /// The host, lowercased (IPv6 literals keep their brackets).
    var host: String
    /// The explicit port, or the scheme's default (80, 443).
    var port: Int

    /// Parses `url`, or `nil` when it is not a plain absolute http(s) URL.
    init?(_ url: String) {
        let bytes = Array(url.utf8)
        guard bytes.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\\") }) else { return nil }
        guard let separator = url.firstRange(of: "://") else { return nil }
        let scheme = url[..<separator.lowerBound].lowercased()
        let defaultPort: Int
        switch scheme {
        case "http": defaultPort = 80
        case "https": defaultPort = 443
        default: return nil
        }
        let rest = url[separator.upperBound...]
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard !authority.isEmpty, !authority.contains("@") else { return nil }
        var host = Substring(authority)
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = authority[...close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { return nil }
                portText = after.dropFirst()
            }
        } else if let colon = authority.lastIndex(of: ":") {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        }
        guard !host.isEmpty else { return nil }
        var port = defaultPort
        if let portText {
            guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy(\.isASCII), let value = Int(portText),
                  (1...65_535).contains(value)
            else { return nil }
            port = value
        }
        self.scheme = scheme
        self.host = host.lowercased()
        self.port = port
    }

    /// What follows the origin in `url` (its path, query and fragment; "" when nothing does), for
    /// a URL `init?(_:)` accepts; nil otherwise.
    static func target(of url: String) -> Substring? {
        guard URLOrigin(url) != nil, let separator = url.firstRange(of: "://") else { return nil }
        let rest = url[separator.upperBound...]
        return rest.drop { $0 != "/" && $0 != "?" && $0 != "#" }
    }
}
