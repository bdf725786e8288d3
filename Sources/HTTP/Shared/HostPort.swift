/// A `host:port` pair from configuration or the command line: where a server listens or a client connects.
public struct HostPort: Sendable, Hashable, CustomStringConvertible {
    /// Host name or address.
    public var host: String
    /// Port number (0 = any free port).
    public var port: UInt16

    /// Parses `host:port` (IPv6 in brackets: `[::1]:9464`).
    public init?(_ text: String) {
        guard let colon = text.lastIndex(of: ":") else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty, let port = UInt16(text[text.index(after: colon)...]) else { return nil }
        self.host = host
        self.port = port
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
