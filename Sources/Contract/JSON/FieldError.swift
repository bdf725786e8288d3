/// A schema problem at one field, turned into a `RequestRejection` by the decoder.
struct FieldError: Error {
    var code: ErrorCode = .invalidRequest
    var field: String
    var message: String

    static func missing(_ field: String, _ type: String) -> FieldError {
        FieldError(field: field, message: "\(field) is required; send it as a \(type)")
    }

    static func wrongType(_ field: String, _ type: String, actual: JSONValue) -> FieldError {
        FieldError(field: field, message: "\(field) must be a \(type), not a \(actual.typeName); send it as a \(type)")
    }

    static func invalid(_ field: String, _ problem: String) -> FieldError {
        FieldError(field: field, message: "\(field) \(problem)")
    }
}
