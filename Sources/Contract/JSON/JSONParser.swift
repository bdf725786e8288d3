/// A strict RFC 8259 parser working on raw bytes.
///
/// - Input must be well-formed UTF-8 (checked before parsing; a byte order mark is rejected).
/// - Only space, tab, LF and CR count as whitespace; any value may be the top-level value.
/// - Arrays and objects nest at most `maxDepth` levels, so hostile input cannot exhaust the stack.
/// - Duplicate keys in one object are rejected (not last-wins): two readers of the same bytes can
///   never disagree about a member.
/// - `\u` escapes must form valid scalars: a lone surrogate is rejected.
/// - Numbers follow the RFC grammar exactly and keep their literal (`JSONNumber`).
public struct JSONParser: Sendable {
    /// Maximum nesting of arrays and objects.
    public var maxDepth: Int
    /// Maximum input length in bytes.
    public var maxBytes: Int

    /// Creates a parser; the defaults suit issuer responses (1 MiB). Requests use `RequestLimits`.
    public init(maxDepth: Int = 64, maxBytes: Int = 1 << 20) {
        self.maxDepth = maxDepth
        self.maxBytes = maxBytes
    }

    /// Parses one JSON document.
    public func parse(_ bytes: [UInt8]) throws(JSONParseError) -> JSONValue {
        let result: Result<JSONValue, JSONParseError> = bytes.withUnsafeBufferPointer { buffer in
            do throws(JSONParseError) {
                return .success(try parse(buffer))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Parses one JSON document from UTF-8 text.
    public func parse(_ text: String) throws(JSONParseError) -> JSONValue {
        try parse(Array(text.utf8))
    }

    /// Parses one JSON document from a buffer that stays valid for the duration of the call.
    public func parse(_ buffer: UnsafeBufferPointer<UInt8>) throws(JSONParseError) -> JSONValue {
        guard buffer.count <= maxBytes else {
            throw JSONParseError(code: .tooLarge, offset: maxBytes,
                                 message: "document is \(buffer.count) bytes, the limit is \(maxBytes); send a smaller document")
        }
        if let bad = UTF8Validator.firstInvalidOffset(buffer) {
            throw JSONParseError(code: .invalidUTF8, offset: bad,
                                 message: "not well-formed UTF-8; encode the document as UTF-8")
        }
        if buffer.count >= 3, buffer[0] == 0xEF, buffer[1] == 0xBB, buffer[2] == 0xBF {
            throw JSONParseError(code: .invalidUTF8, offset: 0,
                                 message: "byte order mark before the document; send UTF-8 without a BOM")
        }
        var reader = JSONReader(buffer: buffer, maxDepth: maxDepth)
        reader.skipWhitespace()
        let value = try reader.parseValue(depth: 0)
        reader.skipWhitespace()
        guard reader.index == buffer.count else {
            throw JSONParseError(code: .syntax, offset: reader.index,
                                 message: "unexpected data after the JSON value; send exactly one value")
        }
        return value
    }
}
