import Contract

/// Identifies one card of one program at one issuer in the simulator's tables.
struct CardKey: Hashable, Sendable {
    let issuer: IssuerKind
    let program: String
    let cardID: String
}
