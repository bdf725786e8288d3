import Testing

@Test func placeholderHTTPTests() { #expect(Bool(true)) }
