import Testing

@Test func placeholderDeployTests() { #expect(Bool(true)) }
