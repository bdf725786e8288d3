import Contract
import Testing

@Suite("JSON parser", .timeLimit(.minutes(5)))
struct JSONParserTests {
    let parser = JSONParser()

    private func parse(_ text: String) throws(JSONParseError) -> JSONValue {
        try parser.parse(text)
    }

    private func failure(_ bytes: [UInt8], parser: JSONParser = JSONParser()) -> JSONParseError? {
        do {
            _ = try parser.parse(bytes)
            return nil
        } catch {
            return error
        }
    }

    private func failure(_ text: String) -> JSONParseError? {
        failure(Array(text.utf8))
    }

    @Test func parsesEveryValueType() throws {
        let value = try parse(#" { "a" : [1, -2.5e3, true, false, null, "x", {}, []] } "#)
        let array = try #require(value["a"]?.arrayValue)
        #expect(array.count == 8)
        #expect(array[0].int64Value == 1)
        #expect(array[1].numberValue?.isInteger == false)
        #expect(array[1].numberValue?.doubleValue == -2500)
        #expect(array[2].boolValue == true)
        #expect(array[3].boolValue == false)
        #expect(array[4].isNull)
        #expect(array[5].stringValue == "x")
        #expect(array[6].objectValue?.isEmpty == true)
        #expect(array[7].arrayValue?.isEmpty == true)
    }

    @Test func acceptsAnyTopLevelValue() throws {
        #expect(try parse("42").int64Value == 42)
        #expect(try parse("\"s\"").stringValue == "s")
        #expect(try parse("null").isNull)
    }

    @Test func tellsIntegersFromFractions() throws {
        #expect(try parse("250").numberValue?.isInteger == true)
        #expect(try parse("250.0").numberValue?.isInteger == false)
        #expect(try parse("25e1").numberValue?.isInteger == false)
        #expect(try parse("250.0").int64Value == nil)
        #expect(try parse("-9223372036854775808").int64Value == Int64.min)
        #expect(try parse("9223372036854775808").int64Value == nil)
        #expect(try parse("123456789012345678901234567890").numberValue?.literal == "123456789012345678901234567890")
    }

    @Test(arguments: ["01", "-", "1.", ".5", "1e", "1e+", "+1", "0x10", "NaN", "Infinity", "- 1", "1.e5"])
    func rejectsMalformedNumbers(_ text: String) {
        #expect(failure(text)?.code == .syntax)
    }

    @Test func decodesEscapesAndSurrogatePairs() throws {
        let value = try parse(#""\"\\\/\b\f\n\r\t\u0041\u00e9\u20ac\ud83d\ude00""#)
        #expect(value.stringValue == "\"\\/\u{08}\u{0C}\n\r\tAé€😀")
        #expect(try parse(#""\u0000""#).stringValue == "\u{0}")
    }

    @Test(arguments: [#""\ud83d""#, #""\ude00""#, #""\ud83d\u0041""#, #""\x41""#, #""\u12""#, #""\u12G4""#])
    func rejectsBadEscapes(_ text: String) {
        #expect(failure(text)?.code == .syntax)
    }

    @Test func rejectsRawControlCharactersInStrings() {
        #expect(failure("\"a\u{0A}b\"")?.code == .syntax)
        #expect(failure("\"a\u{01}b\"")?.code == .syntax)
    }

    @Test func acceptsMultibyteUTF8() throws {
        #expect(try parse("\"Zürich – 東京 – 🎉\"").stringValue == "Zürich – 東京 – 🎉")
    }

    @Test(arguments: [
        [0x22, 0xC0, 0xAF, 0x22],  // overlong '/'
        [0x22, 0xE0, 0x80, 0xAF, 0x22],  // overlong 3-byte
        [0x22, 0xED, 0xA0, 0x80, 0x22],  // encoded surrogate
        [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22],  // above U+10FFFF
        [0x22, 0xE2, 0x82, 0x22],  // truncated sequence
        [0x22, 0x80, 0x22],  // lone continuation
        [0x22, 0xFF, 0x22],  // invalid byte
        [0xEF, 0xBB, 0xBF, 0x31],  // byte order mark
    ] as [[UInt8]])
    func rejectsInvalidUTF8(_ bytes: [UInt8]) {
        #expect(failure(bytes)?.code == .invalidUTF8)
    }

    @Test func limitsNestingDepth() throws {
        let limited = JSONParser(maxDepth: 64)
        let ok = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(throws: Never.self) { try limited.parse(ok) }
        let deep = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        #expect(failure(Array(deep.utf8), parser: limited)?.code == .tooDeep)
        let hostile = String(repeating: "{\"a\":", count: 100_000)
        #expect(failure(Array(hostile.utf8), parser: limited)?.code == .tooDeep)
    }

    @Test func limitsSize() {
        let small = JSONParser(maxDepth: 8, maxBytes: 10)
        #expect(failure(Array("\"0123456789\"".utf8), parser: small)?.code == .tooLarge)
        #expect(failure(Array("\"01234567\"".utf8), parser: small) == nil)
    }

    @Test func rejectsDuplicateKeys() {
        let error = failure(#"{"a":1,"b":2,"a":3}"#)
        #expect(error?.code == .duplicateKey)
        #expect(error?.offset == 13)
        #expect(failure(#"{"a":{"x":1},"b":{"x":1}}"#) == nil)
    }

    @Test(arguments: ["", " ", "{", "[1,]", "{\"a\":1,}", "{\"a\" 1}", "{a:1}", "[1 2]", "tru", "nul", "1 2", "{}x",
                      "'a'", "[\u{0B}]", "\"unterminated"])
    func rejectsSyntaxErrors(_ text: String) {
        #expect(failure(text)?.code == .syntax)
    }

    @Test func errorsNeverQuoteTheInput() {
        let error = failure(#"{"secret-value-123": nope}"#)
        #expect(error != nil)
        #expect(error?.message.contains("secret-value-123") == false)
    }
}
