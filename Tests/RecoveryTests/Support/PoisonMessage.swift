import Contract

/// Requests as a backend on another schema (or a broken one) would send them.
enum PoisonMessage {
    /// `request` with its `version` replaced: a worker that reads version 1 cannot answer it.
    static func withVersion(_ version: Int64, _ request: [UInt8]) throws -> [UInt8] {
        guard case .object(var members) = try JSONParser().parse(request) else { throw Unexpected() }
        members["version"] = .integer(version)
        return JSONWriter.encode(.object(members))
    }

    /// Bytes that are not JSON.
    static let notJSON = Array("{\"request_id\": \"half a message".utf8)

    /// A request padded past the 64 KiB limit.
    static func oversize(_ request: [UInt8]) throws -> [UInt8] {
        guard case .object(var members) = try JSONParser().parse(request) else { throw Unexpected() }
        members["padding"] = .string(String(repeating: "x", count: 70 * 1024))
        return JSONWriter.encode(.object(members))
    }

    struct Unexpected: Error {}
}
