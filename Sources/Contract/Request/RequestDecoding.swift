/// What `RequestDecoder.decode` made of a message.
public enum RequestDecoding: Sendable {
    /// A well-typed request, ready for `RequestValidator`.
    case decoded(ProvisioningRequest)
    /// The `request_id` is readable but the request breaks the schema: publish a `rejected` result.
    case rejected(RequestRejection)
    /// No result is possible (undecodable, over-size, unknown version, no usable `request_id`): dead-letter it.
    case deadLetter(DeadLetterCause)
}
