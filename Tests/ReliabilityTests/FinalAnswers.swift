import Contract

/// How the reliability scenarios judge a request's finals: at-least-once allows the same final
/// twice (identical duplicates are reported), never two different ones. Two finals differ when
/// their status, code, next action or whether they carry a payload differ.
enum FinalAnswers {
    /// What must be the same in every final of one request.
    static func key(_ result: ProvisioningResult) -> String {
        "\(result.status.rawValue)/\(result.code?.rawValue ?? "-")/\(result.nextAction.rawValue)/\(result.payload == nil ? "no-payload" : "payload")"
    }

    /// Whether `results` (every result received for one request) hold two different finals.
    static func conflict(_ results: [ProvisioningResult]) -> Bool {
        Set(results.filter(\.isFinal).map(key)).count > 1
    }

    /// The finals of `results`, described for a failure message.
    static func describe(_ results: [ProvisioningResult]) -> String {
        results.filter(\.isFinal).map { "\(key($0)) (attempt \($0.attempt))" }.joined(separator: ", ")
    }
}

