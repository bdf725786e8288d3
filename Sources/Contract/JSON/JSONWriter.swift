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

    /// Writes epoch milliseconds as an RFC 3339 string (`RFC3339.format`), straight into the buffer.
    public mutating func timestamp(milliseconds: Int64) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        RFC3339.append(milliseconds: milliseconds, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    /// Writes a timestamp, or `null` when absent.
    public mutating func timestamp(orNull milliseconds: Int64?) {
        if let milliseconds { timestamp(milliseconds: milliseconds) } else { null() }
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
        let copied = text.utf8.withContiguousStorageIfAvailable { utf8 -> Bool in
            // The common case (keys, ids, base64): one scan and one memcpy of the string's UTF-8.
            guard Self.firstEscape(in: utf8) == nil else { return false }
            bytes.append(contentsOf: utf8)
            return true
        }
        if copied != true {
            var copy = text
            copy.withUTF8 { appendEscaping($0) }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// The offset of the first byte that needs an escape (below 0x20, a quote or a backslash), or
    /// nil. Eight bytes at a time: the SWAR "has less than" and "has byte" tests are exact yes/no
    /// answers per word; a flagged word is then looked at byte by byte.
    private static func firstEscape(in utf8: UnsafeBufferPointer<UInt8>) -> Int? {
        guard let base = utf8.baseAddress else { return nil }
        let count = utf8.count
        var position = 0
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        while position + 8 <= count {
            let word = UnsafeRawPointer(base + position).loadUnaligned(as: UInt64.self)
            let quote = word ^ (ones &* 0x22)
            let backslash = word ^ (ones &* 0x5C)
            let flagged = ((word &- ones &* 0x20) & ~word) | ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash)
            if flagged & highs != 0 { break }
            position += 8
        }
        while position < count {
            let byte = base[position]
            if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { return position }
            position += 1
        }
        return nil
    }

    private mutating func appendEscaping(_ utf8: UnsafeBufferPointer<UInt8>) {
        guard let base = utf8.baseAddress else { return }
        var runStart = 0
        while runStart < utf8.count {
            let rest = UnsafeBufferPointer(start: base + runStart, count: utf8.count - runStart)
            guard let offset = Self.firstEscape(in: rest) else {
                bytes.append(contentsOf: rest)
                return
            }
            if offset > 0 { bytes.append(contentsOf: UnsafeBufferPointer(start: base + runStart, count: offset)) }
            appendEscape(base[runStart + offset])
            runStart += offset + 1
        }
    }

    private mutating func appendEscape(_ byte: UInt8) {
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
