/// A result, audit event or other contract document that does not match its schema.
public struct ContractDecodingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The offending field path (empty for the document itself).
    public var field: String
    /// What is wrong; never quotes the value.
    public var message: String

    /// Creates an error.
    public init(field: String, message: String) {
        self.field = field
        self.message = message
    }

    init(_ error: FieldError) {
        self.init(field: error.field, message: error.message)
    }

    /// `field: message`.
    public var description: String { field.isEmpty ? message : "\(field): \(message)" }
}
