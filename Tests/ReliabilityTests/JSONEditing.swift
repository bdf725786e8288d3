import Contract

extension JSONValue {
    /// Parses bytes the test produced itself (crashes the test on bad input, which is a test bug).
    static func parsed(_ bytes: [UInt8]) -> JSONValue {
        // A request made by RequestFactory always parses.
        (try? JSONParser(maxDepth: 64, maxBytes: 1 << 20).parse(bytes)) ?? .null
    }

    /// The document as bytes.
    var bytes: [UInt8] { JSONWriter.encode(self) }
}
