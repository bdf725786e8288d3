/// The recursive-descent core of `JSONParser`, reading from a UTF-8-validated buffer.
struct JSONReader {
    let buffer: UnsafeBufferPointer<UInt8>
    let maxDepth: Int
    var index = 0

    init(buffer: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        self.buffer = buffer
        self.maxDepth = maxDepth
    }

    private static let quote = UInt8(ascii: "\"")
    private static let backslash = UInt8(ascii: "\\")

    mutating func skipWhitespace() {
        while index < buffer.count {
            switch buffer[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private func failure(_ message: String, at offset: Int? = nil) -> JSONParseError {
        JSONParseError(code: .syntax, offset: offset ?? index, message: message)
    }

    mutating func parseValue(depth: Int) throws(JSONParseError) -> JSONValue {
        guard index < buffer.count else {
            throw failure("the document ends where a value is expected; send a complete JSON value")
        }
        switch buffer[index] {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case JSONReader.quote: return .string(try parseString())
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return .number(try parseNumber())
        default:
            throw failure("unexpected character where a value is expected; send valid JSON")
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
        let length = literal.utf8CodeUnitCount
        guard index + length <= buffer.count else {
            throw failure("truncated literal; send true, false or null in full")
        }
        let expected = UnsafeBufferPointer(start: literal.utf8Start, count: length)
        for offset in 0..<length where buffer[index + offset] != expected[offset] {
            throw failure("invalid literal; only true, false and null are allowed", at: index + offset)
        }
        index += length
    }

    private mutating func parseObject(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth <= maxDepth else {
            throw JSONParseError(code: .tooDeep, offset: index,
                                 message: "objects and arrays nest deeper than \(maxDepth) levels; flatten the document")
        }
        index += 1  // {
        // Room for a typical object up front: growing from empty re-hashes and reallocates at 1, 2, 4 members.
        skipWhitespace()
        if index < buffer.count, buffer[index] == UInt8(ascii: "}") {
            index += 1
            return .object([:])
        }
        var members = [String: JSONValue](minimumCapacity: 8)
        while true {
            guard index < buffer.count, buffer[index] == JSONReader.quote else {
                throw failure("expected a string key in the object; quote every key")
            }
            let keyOffset = index
            let key = try parseString()
            skipWhitespace()
            guard index < buffer.count, buffer[index] == UInt8(ascii: ":") else {
                throw failure("expected ':' after an object key")
            }
            index += 1
            skipWhitespace()
            let value = try parseValue(depth: depth)
            if members.updateValue(value, forKey: key) != nil {
                throw JSONParseError(code: .duplicateKey, offset: keyOffset,
                                     message: "an object repeats a key; send each key once")
            }
            if try closes(UInt8(ascii: "}"), "an object") { return .object(members) }
        }
    }

    private mutating func parseArray(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth <= maxDepth else {
            throw JSONParseError(code: .tooDeep, offset: index,
                                 message: "objects and arrays nest deeper than \(maxDepth) levels; flatten the document")
        }
        index += 1  // [
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < buffer.count, buffer[index] == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            elements.append(try parseValue(depth: depth))
            if try closes(UInt8(ascii: "]"), "an array") { return .array(elements) }
        }
    }

    /// After a member or an element of `container`: true at its closing byte `close`, false after
    /// a `,` (and the whitespace after it); at anything else, or at the end, the problem.
    private mutating func closes(_ close: UInt8, _ container: String) throws(JSONParseError) -> Bool {
        skipWhitespace()
        guard index < buffer.count else {
            throw failure("the document ends inside \(container); close it with '\(Character(Unicode.Scalar(close)))'")
        }
        let separator = buffer[index]
        index += 1
        if separator == close { return true }
        guard separator == UInt8(ascii: ",") else {
            throw failure("expected ',' or '\(Character(Unicode.Scalar(close)))' in \(container)", at: index - 1)
        }
        skipWhitespace()
        return false
    }

    private mutating func parseNumber() throws(JSONParseError) -> JSONNumber {
        let start = index
        var isInteger = true
        if buffer[index] == UInt8(ascii: "-") { index += 1 }
        guard index < buffer.count else { throw failure("a number ends after '-'") }
        if buffer[index] == UInt8(ascii: "0") {
            index += 1
        } else if buffer[index] >= UInt8(ascii: "1"), buffer[index] <= UInt8(ascii: "9") {
            index += 1
            skipDigits()
        } else {
            throw failure("a number needs a digit after '-'")
        }
        if index < buffer.count, buffer[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            let digits = index
            skipDigits()
            guard index > digits else { throw failure("a fraction needs at least one digit after '.'") }
        }
        if index < buffer.count, buffer[index] == UInt8(ascii: "e") || buffer[index] == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if index < buffer.count, buffer[index] == UInt8(ascii: "+") || buffer[index] == UInt8(ascii: "-") {
                index += 1
            }
            let digits = index
            skipDigits()
            guard index > digits else { throw failure("an exponent needs at least one digit") }
        }
        let literal = String(decoding: UnsafeBufferPointer(rebasing: buffer[start..<index]), as: UTF8.self)
        return JSONNumber(validatedLiteral: literal, isInteger: isInteger)
    }

    private mutating func skipDigits() {
        while index < buffer.count, buffer[index] >= UInt8(ascii: "0"), buffer[index] <= UInt8(ascii: "9") {
            index += 1
        }
    }

    /// Parses a string starting at its opening quote. The buffer is already valid UTF-8, so only
    /// escapes and control characters need attention.
    mutating func parseString() throws(JSONParseError) -> String {
        index += 1  // opening quote
        let start = index
        while index < buffer.count {
            let byte = buffer[index]
            if byte == JSONReader.quote {
                let text = String(decoding: UnsafeBufferPointer(rebasing: buffer[start..<index]), as: UTF8.self)
                index += 1
                return text
            }
            if byte == JSONReader.backslash { break }
            if byte < 0x20 {
                throw failure("a control character inside a string; escape it (e.g. \\n)")
            }
            index += 1
        }
        guard index < buffer.count else {
            throw failure("the document ends inside a string; close it with '\"'")
        }
        var scratch = [UInt8](UnsafeBufferPointer(rebasing: buffer[start..<index]))
        while index < buffer.count {
            let byte = buffer[index]
            if byte == JSONReader.quote {
                index += 1
                return String(decoding: scratch, as: UTF8.self)
            }
            if byte < 0x20 {
                throw failure("a control character inside a string; escape it (e.g. \\n)")
            }
            if byte != JSONReader.backslash {
                scratch.append(byte)
                index += 1
                continue
            }
            let escapeOffset = index
            index += 1
            guard index < buffer.count else { break }
            let escaped = buffer[index]
            index += 1
            switch escaped {
            case JSONReader.quote: scratch.append(JSONReader.quote)
            case JSONReader.backslash: scratch.append(JSONReader.backslash)
            case UInt8(ascii: "/"): scratch.append(UInt8(ascii: "/"))
            case UInt8(ascii: "b"): scratch.append(0x08)
            case UInt8(ascii: "f"): scratch.append(0x0C)
            case UInt8(ascii: "n"): scratch.append(0x0A)
            case UInt8(ascii: "r"): scratch.append(0x0D)
            case UInt8(ascii: "t"): scratch.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try readHex4(escapeOffset: escapeOffset)
                if scalar >= 0xD800, scalar <= 0xDBFF {
                    guard index + 1 < buffer.count, buffer[index] == JSONReader.backslash,
                          buffer[index + 1] == UInt8(ascii: "u")
                    else {
                        throw failure("a high surrogate escape without its low surrogate; send a valid pair", at: escapeOffset)
                    }
                    index += 2
                    let low = try readHex4(escapeOffset: escapeOffset)
                    guard low >= 0xDC00, low <= 0xDFFF else {
                        throw failure("a high surrogate escape without its low surrogate; send a valid pair", at: escapeOffset)
                    }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if scalar >= 0xDC00, scalar <= 0xDFFF {
                    throw failure("a lone low surrogate escape; send a valid pair", at: escapeOffset)
                }
                appendUTF8(scalar, to: &scratch)
            default:
                throw failure("an invalid escape; use one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX", at: escapeOffset)
            }
        }
        throw failure("the document ends inside a string; close it with '\"'")
    }

    private mutating func readHex4(escapeOffset: Int) throws(JSONParseError) -> UInt32 {
        guard index + 4 <= buffer.count else {
            throw failure("a \\u escape needs four hex digits", at: escapeOffset)
        }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = buffer[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw failure("a \\u escape needs four hex digits", at: escapeOffset)
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    private func appendUTF8(_ scalar: UInt32, to bytes: inout [UInt8]) {
        switch scalar {
        case 0..<0x80:
            bytes.append(UInt8(scalar))
        case 0x80..<0x800:
            bytes.append(UInt8(0xC0 | (scalar >> 6)))
            bytes.append(UInt8(0x80 | (scalar & 0x3F)))
        case 0x800..<0x10000:
            bytes.append(UInt8(0xE0 | (scalar >> 12)))
            bytes.append(UInt8(0x80 | ((scalar >> 6) & 0x3F)))
            bytes.append(UInt8(0x80 | (scalar & 0x3F)))
        default:
            bytes.append(UInt8(0xF0 | (scalar >> 18)))
            bytes.append(UInt8(0x80 | ((scalar >> 12) & 0x3F)))
            bytes.append(UInt8(0x80 | ((scalar >> 6) & 0x3F)))
            bytes.append(UInt8(0x80 | (scalar & 0x3F)))
        }
    }
}
