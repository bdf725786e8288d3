import Contract

/// What the attempts of one call have produced so far.
struct ExchangeProgress: Sendable {
    /// HTTP sends made.
    var attempts = 0
    /// Milliseconds spent inside HTTP exchanges.
    var issuerMs: Double = 0
    /// Whether any attempt may have reached the issuer.
    var mayHaveBeenSent = false
    /// The last attempt's answer.
    var lastAnswer: IssuerAnswer?
    /// The last HTTP status received.
    var lastStatus: Int?
}
