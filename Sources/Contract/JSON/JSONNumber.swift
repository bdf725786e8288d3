/// A JSON number kept as its exact literal text, so integers and fractions stay distinguishable and
/// no precision is lost between parsing and writing.
public struct JSONNumber: Sendable, Hashable, CustomStringConvertible {
    /// The literal as it appeared in the document (RFC 8259 number grammar).
    public let literal: String

    /// Whether the literal has neither a fraction nor an exponent (`42`, `-7`; not `1.0`, not `1e2`).
    public let isInteger: Bool

    /// Creates a number from an integer.
    public init(_ value: Int64) {
        literal = String(value)
        isInteger = true
    }

    /// Creates a number from a literal that the parser has already checked against the grammar.
    init(validatedLiteral: String, isInteger: Bool) {
        literal = validatedLiteral
        self.isInteger = isInteger
    }

    /// Creates a number from a literal, or `nil` when the text is not an RFC 8259 number.
    public init?(literal: String) {
        var integer = true
        guard JSONNumber.matchesGrammar(Array(literal.utf8), isInteger: &integer) else { return nil }
        self.literal = literal
        isInteger = integer
    }

    /// The value as `Int64` when the literal is an integer literal inside the `Int64` range.
    public var int64Value: Int64? {
        isInteger ? Int64(literal) : nil
    }

    /// The value as the nearest `Double` (may round).
    public var doubleValue: Double {
        Double(literal) ?? .nan
    }

    /// The literal text.
    public var description: String { literal }

    /// Checks `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?` over the whole input.
    static func matchesGrammar(_ bytes: [UInt8], isInteger: inout Bool) -> Bool {
        var index = 0
        let count = bytes.count
        isInteger = true
        if index < count, bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < count else { return false }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else if bytes[index] >= UInt8(ascii: "1"), bytes[index] <= UInt8(ascii: "9") {
            while index < count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") { index += 1 }
        } else {
            return false
        }
        if index < count, bytes[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            let start = index
            while index < count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") { index += 1 }
            guard index > start else { return false }
        }
        if index < count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if index < count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            let start = index
            while index < count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") { index += 1 }
            guard index > start else { return false }
        }
        return index == count
    }
}
