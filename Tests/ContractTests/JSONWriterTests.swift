import Contract
import Testing

@Suite("JSON writer", .timeLimit(.minutes(5)))
struct JSONWriterTests {
    @Test func escapesStringsPerRFC8259() {
        var writer = JSONWriter()
        writer.string("q\"b\\n\n r\r t\t \u{08}\u{0C} nul\u{0} us\u{1F} del\u{7F} é 😀 /")
        #expect(writer.text == #""q\"b\\n\n r\r t\t \b\f nul\u0000 us\u001f del"# + "\u{7F} é 😀 /\"")
    }

    @Test func placesCommasAndWritesNumbers() {
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("a"); writer.integer(0)
        writer.key("b"); writer.integer(-9_223_372_036_854_775_808)
        writer.key("c"); writer.beginArray(); writer.integer(9_223_372_036_854_775_807); writer.null(); writer.bool(true)
        writer.beginObject(); writer.endObject(); writer.beginArray(); writer.endArray(); writer.endArray()
        writer.key("d"); writer.string(orNull: nil)
        writer.endObject()
        #expect(writer.text == #"{"a":0,"b":-9223372036854775808,"c":[9223372036854775807,null,true,{},[]],"d":null}"#)
    }

    @Test func sortsObjectKeysByUTF8Bytes() {
        let value: JSONValue = .object(["b": .integer(1), "a": .integer(2), "B": .integer(3), "é": .integer(4), "aa": .integer(5)])
        #expect(String(decoding: JSONWriter.encode(value), as: UTF8.self) == #"{"B":3,"a":2,"aa":5,"b":1,"é":4}"#)
    }

    @Test func roundTripsParsedDocuments() throws {
        let text = #"{"n":[1,-0.5,1e300,12345678901234567890],"s":"\u0001\"\\é😀","o":{"z":null,"a":[true,false]}}"#
        let value = try JSONParser().parse(text)
        let written = JSONWriter.encode(value)
        #expect(try JSONParser().parse(written) == value)
        #expect(JSONWriter.encode(try JSONParser().parse(written)) == written)
    }

    @Test func keepsNumberLiteralsExactly() throws {
        let value = try JSONParser().parse("[1.10,2E+3,-0]")
        #expect(String(decoding: JSONWriter.encode(value), as: UTF8.self) == "[1.10,2E+3,-0]")
    }

    @Test func escapesEverywhereInLongStringsLikeTheBytewiseRule() throws {
        // The writer scans eight bytes at a time: put every special character at every offset of
        // a word, next to multi-byte UTF-8, and compare with the plain byte-by-byte rule.
        func reference(_ text: String) -> [UInt8] {
            var out: [UInt8] = [UInt8(ascii: "\"")]
            for byte in text.utf8 {
                switch byte {
                case UInt8(ascii: "\""): out += Array("\\\"".utf8)
                case UInt8(ascii: "\\"): out += Array("\\\\".utf8)
                case 0x0A: out += Array("\\n".utf8)
                case 0x0D: out += Array("\\r".utf8)
                case 0x09: out += Array("\\t".utf8)
                case 0x08: out += Array("\\b".utf8)
                case 0x0C: out += Array("\\f".utf8)
                case ..<0x20: out += Array("\\u00".utf8) + [Array("0123456789abcdef".utf8)[Int(byte >> 4)], Array("0123456789abcdef".utf8)[Int(byte & 0xF)]]
                default: out.append(byte)
                }
            }
            return out + [UInt8(ascii: "\"")]
        }
        let specials = ["\"", "\\", "\n", "\u{01}", "\u{1F}", "\t", "é", "€", "😀", "\u{7F}", " ", "!", "#", "[", "]"]
        for special in specials {
            for offset in 0..<17 {
                let text = String(repeating: "a", count: offset) + special + String(repeating: "b", count: 23 - offset % 7)
                var writer = JSONWriter()
                writer.string(text)
                #expect(writer.bytes == reference(text), "\(special.unicodeScalars.map(\.value)) at \(offset)")
                #expect(try JSONParser().parse(writer.bytes).stringValue == text)
            }
        }
    }
}
