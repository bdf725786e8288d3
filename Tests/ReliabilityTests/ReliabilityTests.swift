import Testing

@Test func placeholderReliabilityTests() { #expect(Bool(true)) }
