import Testing

@Test func placeholderRecoveryTests() { #expect(Bool(true)) }
