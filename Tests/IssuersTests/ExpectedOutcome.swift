import Contract
import Issuers
import Testing

/// What a report must say: the result fields and how the call went.
struct ExpectedOutcome: Sendable, CustomStringConvertible {
    var status: ResultStatus
    var code: ErrorCode?
    var next: NextAction
    var isFinal: Bool = true
    var issuerCode: String?
    var httpStatus: Int?
    var attempts: Int = 1

    var description: String {
        "\(status.rawValue)/\(code?.rawValue ?? "-")/\(next.rawValue)/final=\(isFinal)/\(issuerCode ?? "-")/\(httpStatus.map(String.init) ?? "-")/x\(attempts)"
    }

    func check(_ report: IssuerCallReport, _ label: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let outcome = report.outcome
        #expect(outcome.status == status && outcome.code == code && outcome.nextAction == next && outcome.isFinal == isFinal,
                "\(label): expected \(self), got \(report.summary)", sourceLocation: sourceLocation)
        #expect(outcome.issuerCode == issuerCode, "\(label): issuer_code \(outcome.issuerCode ?? "nil")", sourceLocation: sourceLocation)
        #expect(report.httpStatus == httpStatus && report.attempts == attempts,
                "\(label): http \(report.httpStatus.map(String.init) ?? "nil"), attempts \(report.attempts)", sourceLocation: sourceLocation)
        if status != .provisioned && status != .authorized {
            #expect(report.payload == nil, "\(label): no payload on failure", sourceLocation: sourceLocation)
        }
    }
}
