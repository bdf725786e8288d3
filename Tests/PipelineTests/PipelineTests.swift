import Testing

@Test func placeholderPipelineTests() { #expect(Bool(true)) }
