/// An unambiguous byte string of fields for a MAC to cover: each field is its length as a 4-byte
/// big-endian integer followed by its bytes, an absent field is the 4 bytes `FF FF FF FF` alone,
/// and a null one (a Kafka header present without a value) `FF FF FF FE` alone, so "absent",
/// "null" and "empty" never encode alike and no two field lists share an encoding. Used by the
/// request signature (v2, CONTRACT) and the dead-letter MAC.
public struct LengthPrefixedFields: Sendable {
    /// The encoded fields so far.
    public private(set) var bytes: [UInt8] = []

    /// An empty list with room for `capacity` bytes.
    public init(capacity: Int = 0) {
        bytes.reserveCapacity(capacity)
    }

    /// Appends one field (nil: absent).
    public mutating func append(_ field: [UInt8]?) {
        guard let field else {
            bytes += [0xFF, 0xFF, 0xFF, 0xFF]
            return
        }
        let count = UInt32(truncatingIfNeeded: field.count)
        bytes += [UInt8(truncatingIfNeeded: count >> 24), UInt8(truncatingIfNeeded: count >> 16),
                  UInt8(truncatingIfNeeded: count >> 8), UInt8(truncatingIfNeeded: count)]
        bytes += field
    }

    /// Appends a null field: present, without a value (`FF FF FF FE`).
    public mutating func appendNull() {
        bytes += [0xFF, 0xFF, 0xFF, 0xFE]
    }

    /// Appends a text field as UTF-8 (nil: absent).
    public mutating func append(_ text: String?) {
        append(text.map { Array($0.utf8) })
    }
}
