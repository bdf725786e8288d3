/// `provisioner simulator`: serves the issuer simulator (Imprint, DCS, Gnosis Pay, Worldpay).
enum SimulatorCommand: Command {
    static let name = "simulator"
    static let summary = "serves the issuer simulator (Imprint, DCS, Gnosis Pay, Worldpay)"
    static let help = "usage: provisioner simulator\n\nserves the issuer simulator (Imprint, DCS, Gnosis Pay, Worldpay) (not built yet)"

    static func run(_ arguments: inout CommandArguments) throws -> Int32 {
        throw CommandFailure("'simulator' is not built yet")
    }
}
