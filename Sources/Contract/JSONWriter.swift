/// A fast JSON encoder that appends UTF-8 to a byte buffer.
///
/// Commas are placed automatically: write `beginObject()`, then `key(_:)` and a value for each
/// member, then `endObject()`. Strings are escaped per RFC 8259 (quote, backslash and control
/// characters; everything else is copied as UTF-8). `JSONValue` objects are written with keys sorted
/// by their UTF-8 bytes, so the same value always yields the same bytes.
public struct JSONWriter: Sendable {
    /// The bytes written so far.
    public private(set) var bytes: [UInt8]

    /// Creates an empty writer with room for `capacity` bytes.
    public init(capacity: Int = 512) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// The bytes written so far, as a string.
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    private mutating func separate() {
        guard let last = bytes.last else { return }
        switch last {
        case UInt8(ascii: "{"), UInt8(ascii: "["), UInt8(ascii: ":"): return
        default: bytes.append(UInt8(ascii: ","))
        }
    }

    /// Opens an object.
    public mutating func beginObject() {
        separate()
        bytes.append(UInt8(ascii: "{"))
    }

    /// Closes an object.
    public mutating func endObject() { bytes.append(UInt8(ascii: "}")) }

    /// Opens an array.
    public mutating func beginArray() {
        separate()
        bytes.append(UInt8(ascii: "["))
    }

    /// Closes an array.
    public mutating func endArray() { bytes.append(UInt8(ascii: "]")) }

    /// Writes an object key and the colon; the value follows.
    public mutating func key(_ name: String) {
        separate()
        appendQuoted(name)
        bytes.append(UInt8(ascii: ":"))
    }

    /// Writes a string value.
    public mutating func string(_ value: String) {
        separate()
        appendQuoted(value)
    }

    /// Writes an integer value.
    public mutating func integer(_ value: Int64) {
        separate()
        appendDecimal(value)
    }

    /// Writes a Boolean value.
    public mutating func bool(_ value: Bool) {
        separate()
        bytes.append(contentsOf: value ? JSONWriter.trueBytes : JSONWriter.falseBytes)
    }

    /// Writes `null`.
    public mutating func null() {
        separate()
        bytes.append(contentsOf: JSONWriter.nullBytes)
    }

    /// Writes a number literal unchanged.
    public mutating func number(_ value: JSONNumber) {
        separate()
        bytes.append(contentsOf: value.literal.utf8)
    }

    /// Writes a string, or `null` when absent.
    public mutating func string(orNull value: String?) {
        if let value { string(value) } else { null() }
    }

    /// Writes an integer, or `null` when absent.
    public mutating func integer(orNull value: Int64?) {
        if let value { integer(value) } else { null() }
    }

    /// Writes any `JSONValue`, object keys sorted by UTF-8 bytes.
    public mutating func value(_ value: JSONValue) {
        switch value {
        case .null: null()
        case .bool(let flag): bool(flag)
        case .number(let number): self.number(number)
        case .string(let text): string(text)
        case .array(let elements):
            beginArray()
            for element in elements { self.value(element) }
            endArray()
        case .object(let members):
            beginObject()
            let keys = members.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            for name in keys {
                key(name)
                self.value(members[name] ?? .null)
            }
            endObject()
        }
    }

    /// Encodes one value to bytes.
    public static func encode(_ value: JSONValue) -> [UInt8] {
        var writer = JSONWriter()
        writer.value(value)
        return writer.bytes
    }

    private static let trueBytes: [UInt8] = Array("true".utf8)
    private static let falseBytes: [UInt8] = Array("false".utf8)
    private static let nullBytes: [UInt8] = Array("null".utf8)
    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    private mutating func appendQuoted(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        var copy = text
        copy.withUTF8 { utf8 in
            var runStart = 0
            for position in 0..<utf8.count {
                let byte = utf8[position]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                if position > runStart {
                    bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<position]))
                }
                runStart = position + 1
                bytes.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""): bytes.append(UInt8(ascii: "\""))
                case UInt8(ascii: "\\"): bytes.append(UInt8(ascii: "\\"))
                case 0x0A: bytes.append(UInt8(ascii: "n"))
                case 0x0D: bytes.append(UInt8(ascii: "r"))
                case 0x09: bytes.append(UInt8(ascii: "t"))
                case 0x08: bytes.append(UInt8(ascii: "b"))
                case 0x0C: bytes.append(UInt8(ascii: "f"))
                default:
                    bytes.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                              JSONWriter.hexDigits[Int(byte >> 4)], JSONWriter.hexDigits[Int(byte & 0x0F)]])
                }
            }
            if runStart < utf8.count {
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<utf8.count]))
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func appendDecimal(_ value: Int64) {
        if value == 0 {
            bytes.append(UInt8(ascii: "0"))
            return
        }
        var magnitude = value.magnitude
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        withUnsafeMutableBytes(of: &digits) { raw in
            while magnitude > 0 {
                raw[count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            }
            for position in stride(from: count - 1, through: 0, by: -1) {
                bytes.append(raw[position])
            }
        }
    }
}
