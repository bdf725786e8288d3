/// Who a request is (CONTRACT section 12): the pair (`program`, `request_id`). Everything the
/// worker remembers about a request — the duplicate filter, call markers, the duplicate horizon,
/// the nonce guard's "same request" — and everything a client matches an answer by is keyed by
/// it, so a message naming program P never affects a request of program Q with the same
/// `request_id` (a keyless producer may name any unsigned program).
public struct RequestIdentity: Sendable, Hashable {
    /// The program the request names (a configured program's name).
    public var program: String
    /// Its `request_id`.
    public var requestID: String

    /// The identity of `requestID` under `program`.
    public init(program: String, requestID: String) {
        self.program = program
        self.requestID = requestID
    }

    /// The identity a decoded request claims.
    public init(_ request: ProvisioningRequest) {
        self.init(program: request.program, requestID: request.requestID)
    }
}
