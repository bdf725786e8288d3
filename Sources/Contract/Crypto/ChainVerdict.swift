/// The result of checking an Apple certificate chain.
public enum ChainVerdict: Sendable, Hashable {
    /// Two DER certificates, the leaf issued and signed by the intermediate, the intermediate not self-signed.
    case valid
    /// The chain fails; `field` is the path to report (`apple.certificates` or `apple.certificates[i]`).
    case invalid(field: String, message: String)
}
