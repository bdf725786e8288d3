/// Why a success body does not hold a usable payload; the reason names fields only.
struct PayloadProblem: Error, Sendable {
    /// Our explanation.
    var reason: String
}
