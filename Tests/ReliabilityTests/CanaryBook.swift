import Contract
import Foundation
import Synchronization

/// Unique marker strings planted in every secret a request or a worker's environment can carry,
/// and the byte patterns that would reveal each one in an output.
final class CanaryBook: Sendable {
    struct Needle: Sendable {
        /// What was planted (`"<path> card.id"`), the same for every encoding of it.
        var secret: String
        /// The secret and the encoding this needle looks for (`"<path> card.id (base64url@1)"`).
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

    /// Registers an exact text (a canary, a certificate, a whole base64 value) as something no
    /// output may hold, in every encoding an output could give it: as is, base64 and base64url (at
    /// each of the three alignments it can have inside a longer encoded value, so a canary that is
    /// part of a larger field is found too), hex in either case, and percent-encoding.
    func register(_ label: String, _ text: String) {
        let variants = Self.encodings(of: Array(text.utf8)).map { Needle(secret: label, label: "\(label) (\($0.name))", bytes: $0.bytes) }
        needles.withLock { $0 += [Needle(secret: label, label: label, bytes: Array(text.utf8))] + variants }
    }

    /// Opaque bytes holding a canary (for nonces and signatures): base64 of the canary's ASCII and
    /// `padding` random bytes. The canary (with its encodings) and the whole base64 value are registered.
    func opaqueBase64(_ kind: String, label: String, padding: Int) -> String {
        let canary = mint(kind, label: label)
        let encoded = Crypto.base64Encode(Array(canary.utf8) + Crypto.randomBytes(padding))
        register(label + " (whole base64 value)", encoded)
        return encoded
    }

    var all: [Needle] { needles.withLock { $0 } }

    /// The encodings of `bytes` that an output could carry, each as the part of the encoded text
    /// that depends on `bytes` alone (whatever comes before or after them).
    static func encodings(of bytes: [UInt8]) -> [(name: String, bytes: [UInt8])] {
        var found: [(String, [UInt8])] = []
        for offset in 0..<3 {
            // `offset` bytes before the value: its base64 characters are those wholly inside it.
            let encoded = Array(Crypto.base64Encode([UInt8](repeating: 0, count: offset) + bytes).utf8)
            let first = (offset * 8 + 5) / 6
            let last = (offset + bytes.count) * 8 / 6
            guard last - first >= 8 else { continue }
            let standard = Array(encoded[first..<last])
            found.append(("base64@\(offset)", standard))
            let url = standard.map { $0 == UInt8(ascii: "+") ? UInt8(ascii: "-") : $0 == UInt8(ascii: "/") ? UInt8(ascii: "_") : $0 }
            if url != standard { found.append(("base64url@\(offset)", url)) }
        }
        let hex = Crypto.hex(bytes)
        found.append(("hex", Array(hex.utf8)))
        found.append(("HEX", Array(hex.uppercased().utf8)))
        found.append(("percent-encoded", Array(bytes.map { String(format: "%%%02X", $0) }.joined().utf8)))
        found.append(("percent-encoded, lower case", Array(bytes.map { String(format: "%%%02x", $0) }.joined().utf8)))
        return found
    }

    /// Which needles occur in which source: `(source, label)` pairs. One pass over each source,
    /// looking up every 8-byte window among the needles' first 8 bytes (thousands of needles
    /// with their encodings would make one search per needle slow).
    static func find(_ needles: [Needle], in sources: [(name: String, blob: [UInt8])]) -> [(source: String, label: String)] {
        func key(_ bytes: UnsafeRawBufferPointer, _ at: Int) -> UInt64 { bytes.loadUnaligned(fromByteOffset: at, as: UInt64.self) }
        var byPrefix: [UInt64: [Int]] = [:]
        var short: [Int] = []
        for (index, needle) in needles.enumerated() {
            if needle.bytes.count < 8 { short.append(index); continue }
            byPrefix[needle.bytes.withUnsafeBytes { key($0, 0) }, default: []].append(index)
        }
        var found: [(String, String)] = []
        for source in sources where !source.blob.isEmpty {
            var hits = Set<Int>()
            source.blob.withUnsafeBytes { blob in
                guard blob.count >= 8 else { return }
                for position in 0...(blob.count - 8) {
                    guard let candidates = byPrefix[key(blob, position)] else { continue }
                    for index in candidates where !hits.contains(index) {
                        let bytes = needles[index].bytes
                        if position + bytes.count <= blob.count && bytes.withUnsafeBytes({ memcmp($0.baseAddress!, blob.baseAddress! + position, bytes.count) == 0 }) {
                            hits.insert(index)
                        }
                    }
                }
            }
            let data = Data(source.blob)
            for index in short where data.range(of: Data(needles[index].bytes)) != nil { hits.insert(index) }
            for index in hits.sorted() { found.append((source.name, needles[index].label)) }
        }
        return found
    }
}
