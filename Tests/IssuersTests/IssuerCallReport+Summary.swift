import Issuers

extension IssuerCallReport {
    /// A one-line summary for test failure messages (no secrets: codes and statuses only).
    var summary: String {
        "status=\(outcome.status.rawValue) code=\(outcome.code?.rawValue ?? "-") next=\(outcome.nextAction.rawValue) "
            + "final=\(outcome.isFinal) issuer_code=\(outcome.issuerCode ?? "-") http=\(httpStatus.map(String.init) ?? "-") "
            + "attempts=\(attempts) answer=\(answer)"
    }
}
