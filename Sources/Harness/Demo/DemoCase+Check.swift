import Contract

extension DemoCase {
    /// What was expected and what came instead when `snapshot` does not hold this case's
    /// expectation (nil when it does): the demo's summary and the tests that run its mix on other
    /// brokers judge a case the same way.
    public func unmet(in snapshot: ResultCollector.Snapshot) -> (expected: String, got: String)? {
        let received = snapshot.results[request.requestID] ?? []
        switch expectation {
        case .final(let status, let code):
            guard let final = received.first(where: { $0.result.isFinal })?.result else {
                return (expectation.description, received.isEmpty ? "no result" : "no final result")
            }
            guard final.status != status || (code != nil && final.code != code) else { return nil }
            return (expectation.description, final.code.map { "\(final.status.rawValue)/\($0.rawValue)" } ?? final.status.rawValue)
        case .deadLetter(let code):
            return snapshot.deadLetters.contains { $0.provenance?.code.rawValue == code } ? nil : (expectation.description, "no such dead letter")
        case .duplicate:
            let finals = received.filter(\.result.isFinal).count
            return finals == 1 ? nil : ("one result for both copies", "\(finals) final results")
        }
    }
}
