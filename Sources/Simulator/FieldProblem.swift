/// A request body field the simulator rejects, with the message the issuer would send.
struct FieldProblem: Error, Sendable {
    /// The field path, e.g. `nonce` or `instruction.value.amount`.
    let field: String
    /// What is wrong, naming the field.
    let message: String
}
