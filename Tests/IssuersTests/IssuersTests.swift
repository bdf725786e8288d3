import Testing

@Test func placeholderIssuersTests() { #expect(Bool(true)) }
