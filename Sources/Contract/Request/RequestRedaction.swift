/// Removes single-use secrets from a raw request before it is parked (CONTRACT section 6: an Apple
/// Pay request past its deadline is dead-lettered without certificates, nonce and signature).
public enum RequestRedaction {
    /// The members removed from `apple`.
    public static let appleHandshakeMembers = ["certificates", "nonce", "nonce_signature"]

    /// The request JSON with `apple.certificates`, `apple.nonce` and `apple.nonce_signature`
    /// removed and every other member kept; `nil` when the bytes are not a JSON object.
    public static func strippingAppleHandshake(_ bytes: [UInt8], limits: RequestLimits = RequestLimits()) -> [UInt8]? {
        guard let document = try? JSONParser(maxDepth: limits.maxDepth, maxBytes: limits.maxBytes).parse(bytes),
              case .object(var members) = document
        else { return nil }
        if case .object(var apple)? = members["apple"] {
            for name in appleHandshakeMembers { apple.removeValue(forKey: name) }
            members["apple"] = .object(apple)
        }
        return JSONWriter.encode(.object(members))
    }
}
