import HTTP

/// Shared request builders for the HTTP tests.
enum Fixtures {
    /// `http://127.0.0.1:<port><path>`.
    static func url(_ server: HTTPServer, _ path: String) -> String {
        "http://127.0.0.1:\(server.port)\(path)"
    }

    /// A recognisable body of `count` bytes.
    static func body(_ count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
    }
}
