/// `provisioner broker`: runs an embedded Kafka cluster on loopback with the pipeline topics.
enum BrokerCommand: Command {
    static let name = "broker"
    static let summary = "runs an embedded Kafka cluster on loopback with the pipeline topics"
    static let help = "usage: provisioner broker\n\nruns an embedded Kafka cluster on loopback with the pipeline topics (not built yet)"

    static func run(_ arguments: inout CommandArguments) throws -> Int32 {
        throw CommandFailure("'broker' is not built yet")
    }
}
