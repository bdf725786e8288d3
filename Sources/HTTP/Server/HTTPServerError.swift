/// Why an `HTTPServer` could not start.
public struct HTTPServerError: Error, Sendable, CustomStringConvertible {
    /// The kind of failure.
    public enum Kind: Sendable, Hashable {
        /// The host is not an address or name this machine can listen on.
        case invalidAddress
        /// Listening failed (port in use, no permission, out of file descriptors).
        case listenFailed
    }

    /// The kind of failure.
    public var kind: Kind
    /// What happened and what to do.
    public var message: String

    /// The message.
    public var description: String { message }
}
