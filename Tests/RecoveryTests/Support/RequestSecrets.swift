import Contract

/// What a request message must never show outside Kafka's requests topic: its certificates, nonce,
/// nonce signature and raw card, user, wallet, device and session ids. Read from the message itself.
struct RequestSecrets: Sendable {
    /// Every secret string of the message.
    var values: [String]

    init(_ message: [UInt8]) throws {
        let document = try JSONParser().parse(message)
        var values: [String] = []
        if let apple = document["apple"] {
            values += apple["certificates"]?.arrayValue?.compactMap(\.stringValue) ?? []
            values += [apple["nonce"]?.stringValue, apple["nonce_signature"]?.stringValue].compactMap { $0 }
        }
        if let google = document["google"] {
            values += ["wallet_id", "device_id", "server_session_id"].compactMap { google[$0]?.stringValue }
        }
        if let card = document["card"] {
            values += ["id", "user_id"].compactMap { card[$0]?.stringValue }
        }
        self.values = values
    }

    /// The secrets that occur in `text`.
    func leaked(in text: String) -> [String] {
        values.filter { text.contains($0) }
    }

    /// The secrets that occur in `bytes`.
    func leaked(in bytes: [UInt8]) -> [String] {
        leaked(in: String(decoding: bytes, as: UTF8.self))
    }
}
