import Kafka

/// `provisioner version` (also `provisioner --version`): the librdkafka loaded at run time, the
/// headers the binary was built against, and the default partition assignor.
enum VersionCommand: Command {
    static let name = "version"
    static let summary = "prints the librdkafka loaded at run time and the default partition assignor"
    static let help = """
        usage: provisioner version

        Prints three lines:
          librdkafka V                the library the dynamic linker loaded (rd_kafka_version_str());
                                      LD_LIBRARY_PATH can point it at another build than the system's
          built against librdkafka V  the headers this binary was compiled with (RD_KAFKA_VERSION)
          default assignor NAME       the groups' partition.assignment.strategy unless one is configured
                                      (\(KafkaRuntime.defaultAssignor); below \(KafkaRuntime.cooperativeFixedIn) librdkafka#4059 applies to it)

        The worker logs the loaded version and the assignor in force in its 'worker started' line,
        and exports the version as provisioner_librdkafka_info{version="V"} 1.
        """

    static func run(_ arguments: inout CommandArguments) throws -> Int32 {
        try arguments.rejectUnknown()
        if let unexpected = arguments.popPositional() {
            throw UsageError("unexpected argument '\(unexpected)'")
        }
        print("librdkafka \(KafkaRuntime.version)")
        print("built against librdkafka \(KafkaRuntime.builtAgainst)")
        print("default assignor \(KafkaRuntime.defaultAssignor)")
        return 0
    }
}
