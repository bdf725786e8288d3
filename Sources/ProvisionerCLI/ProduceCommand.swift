/// `provisioner produce`: produces requests (one JSON per line) keyed by card id.
enum ProduceCommand: Command {
    static let name = "produce"
    static let summary = "produces requests (one JSON per line) keyed by card id"
    static let help = "usage: provisioner produce\n\nproduces requests (one JSON per line) keyed by card id (not built yet)"

    static func run(_ arguments: inout CommandArguments) throws -> Int32 {
        throw CommandFailure("'produce' is not built yet")
    }
}
