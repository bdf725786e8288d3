/// Keyed HMAC-SHA256 pseudonyms for audit events and logs (CONTRACT section 5).
///
/// Input is domain-separated (`provisioner/card_ref/v1` or `provisioner/device_ref/v1`, a zero
/// byte, then the identifier), so a card and a device with the same id get unrelated pseudonyms.
/// Output is the first 16 bytes of the MAC as 32 hex characters, prefixed `<key id>:` under a
/// named key; during a rotation each pseudonym also carries its twin under the previous key
/// (`Pseudonym.previous`). The keys print as `<redacted>`.
public struct Pseudonymizer: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    private let key: [UInt8]
    /// The id pseudonyms carry (nil: the unnamed key, plain hex).
    private let keyID: String?
    /// The previous key and its id, during a rotation.
    private let previousKey: (key: [UInt8], id: String?)?

    /// The shortest key the worker accepts, in bytes: the HMAC-SHA256 output size, so the key is
    /// not what limits the pseudonyms' strength (a short key could be searched for from one known
    /// card id and its `card_ref`, and then every pseudonym reversed by guessing ids).
    public static let minimumKeyBytes = 32

    /// Creates a pseudonymizer with a secret key (from the environment; the worker refuses keys
    /// shorter than `minimumKeyBytes`).
    public init(key: [UInt8]) {
        self.key = key
        keyID = nil
        previousKey = nil
    }

    /// Creates a pseudonymizer whose key is the UTF-8 of a secret string (e.g. an environment
    /// variable), named `keyID` (1-16 of `[A-Za-z0-9._-]`; nil: unnamed), with `previous` (the key
    /// before it in a rotation, whose pseudonyms ride along as `Pseudonym.previous`).
    public init(key: Sensitive, keyID: String? = nil, previous: Pseudonymizer? = nil) {
        self.key = Array(key.revealed.utf8)
        self.keyID = keyID
        previousKey = previous.map { ($0.key, $0.keyID) }
    }

    /// The pseudonym of a card id.
    public func cardRef(_ cardID: Sensitive) -> Pseudonym {
        var text = cardID.revealed
        return text.withUTF8 { make(domain: "provisioner/card_ref/v1", UnsafeRawBufferPointer($0)) }
    }

    /// The pseudonym of a device identifier (Google `device_id`).
    public func deviceRef(_ deviceID: Sensitive) -> Pseudonym {
        var text = deviceID.revealed
        return text.withUTF8 { make(domain: "provisioner/device_ref/v1", UnsafeRawBufferPointer($0)) }
    }

    /// The device pseudonym of a request: the Apple leaf certificate's DER (PassKit's per-device
    /// certificate), or the Google `device_id`; `nil` for payments.
    public func deviceRef(for request: ProvisioningRequest) -> Pseudonym? {
        if let apple = request.apple, let leaf = apple.certificates.first {
            let bytes = Crypto.base64Decode(leaf.revealed) ?? Array(leaf.revealed.utf8)
            return bytes.withUnsafeBytes { make(domain: "provisioner/device_ref/v1", $0) }
        }
        if let google = request.google { return deviceRef(google.deviceID) }
        return nil
    }

    private func make(domain: StaticString, _ identifier: UnsafeRawBufferPointer) -> Pseudonym {
        let previous = previousKey.map { Pseudonym(validated: Self.hex(key: $0.key, domain: domain, identifier), keyID: $0.id).text }
        return Pseudonym(validated: Self.hex(key: key, domain: domain, identifier), keyID: keyID, previous: previous)
    }

    private static func hex(key: [UInt8], domain: StaticString, _ identifier: UnsafeRawBufferPointer) -> String {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { mac in
            Crypto.hmacSHA256(key: key, into: mac.baseAddress!) { update in
                update(UnsafeRawBufferPointer(start: domain.utf8Start, count: domain.utf8CodeUnitCount))
                withUnsafeBytes(of: UInt8(0)) { update($0) }
                update(identifier)
            }
            return Crypto.hex(UnsafeRawBufferPointer(start: mac.baseAddress, count: 16))
        }
    }

    /// Always `<redacted>`.
    public var description: String { Sensitive.placeholder }
    /// Always `<redacted>`.
    public var debugDescription: String { Sensitive.placeholder }
    /// A mirror without children.
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: nil) }
}
