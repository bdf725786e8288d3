import Contract
import Foundation
import Synchronization

/// Unique marker strings planted in every secret a request or a worker's environment can carry,
/// and the byte patterns that would reveal each one in an output.
final class CanaryBook: Sendable {
    struct Needle: Sendable {
        var label: String
        var bytes: [UInt8]
    }

    private let needles = Mutex<[Needle]>([])

    /// A fresh canary `cnry<kind><hex>` (letters and digits only, so it fits any identifier field),
    /// registered under `label`.
    func mint(_ kind: String, label: String, hexLength: Int = 12) -> String {
        let value = "cnry" + kind + Crypto.hex(Crypto.randomBytes(hexLength / 2))
        register(label, value)
        return value
    }

    /// Registers an exact text (a certificate, a whole base64 value) as something no output may hold.
    func register(_ label: String, _ text: String) {
        needles.withLock { $0.append(Needle(label: label, bytes: Array(text.utf8))) }
    }

    /// Opaque bytes holding a canary (for nonces and signatures): base64 of the canary's ASCII and
    /// `padding` random bytes. The canary, its hex and the whole base64 value are all registered.
    func opaqueBase64(_ kind: String, label: String, padding: Int) -> String {
        let canary = mint(kind, label: label)
        let encoded = Crypto.base64Encode(Array(canary.utf8) + Crypto.randomBytes(padding))
        register(label + " (base64)", encoded)
        register(label + " (hex)", Crypto.hex(Array(canary.utf8)))
        return encoded
    }

    var all: [Needle] { needles.withLock { $0 } }

    /// Which needles occur in which source: `(source, label)` pairs.
    static func find(_ needles: [Needle], in sources: [(name: String, blob: [UInt8])]) -> [(source: String, label: String)] {
        var found: [(String, String)] = []
        for source in sources where !source.blob.isEmpty {
            let data = Data(source.blob)
            for needle in needles where data.range(of: Data(needle.bytes)) != nil {
                found.append((source.name, needle.label))
            }
        }
        return found
    }
}
