/// Groups calls in the `/_sim/calls` log.
struct CallKey: Hashable, Sendable {
    let issuer: String
    let cardID: String
    let handshake: String
}
