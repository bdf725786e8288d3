import Kafka
import Testing

/// `KafkaRuntime`: the loaded librdkafka's version, its known cooperative-rebalance defect, and the default assignor.
@Suite("KafkaRuntime: the loaded librdkafka and the default assignor")
struct KafkaRuntimeTests {
    @Test("cooperative-sticky on every runtime; librdkafka#4059 known below 2.10.0", arguments: [
        ("2.0.2", true), ("2.9.9", true), ("1.9.2", true), ("2.10.0", false), ("2.16.0", false), ("3.0.0", false),
    ])
    func cooperativeDefect(version: String, defect: Bool) throws {
        let release = try #require(KafkaRuntimeVersion(version))
        #expect((release < KafkaRuntime.cooperativeFixedIn) == defect, "\(version)")
        #expect(KafkaRuntime.defaultAssignor == "cooperative-sticky")
    }

    @Test("packed versions (rd_kafka_version, RD_KAFKA_VERSION) read as major.minor.revision", arguments: [
        (0x020002ff, "2.0.2"), (0x020909ff, "2.9.9"), (0x020a0000, "2.10.0"), (0x020a00ff, "2.10.0"), (0x021000ff, "2.16.0"),
    ])
    func packed(packed: Int, text: String) {
        let release = KafkaRuntimeVersion(packed: packed)
        #expect(release.description == text)
        #expect(release == KafkaRuntimeVersion(text))
    }

    @Test("version strings: a pre-release suffix is ignored, anything else not three numbers is refused")
    func parsing() {
        #expect(KafkaRuntimeVersion("2.10.0-RC2") == KafkaRuntimeVersion(major: 2, minor: 10, revision: 0))
        #expect(KafkaRuntimeVersion("2.10") == nil)
        #expect(KafkaRuntimeVersion("two.1.0") == nil)
        #expect(KafkaRuntimeVersion("2.1.") == nil)
        #expect(KafkaRuntimeVersion(major: 2, minor: 9, revision: 9) < KafkaRuntimeVersion(major: 2, minor: 10, revision: 0))
    }

    @Test("the loaded library: its string and packed number agree, and a configured strategy wins over the default")
    func loaded() throws {
        #expect(KafkaRuntimeVersion(KafkaRuntime.version) == KafkaRuntime.release, "\(KafkaRuntime.version) vs \(KafkaRuntime.release)")
        #expect(KafkaRuntime.builtAgainst.major >= 2, "headers \(KafkaRuntime.builtAgainst)")
        #expect(KafkaRuntime.assignor(configured: [:]) == KafkaRuntime.defaultAssignor)
        #expect(KafkaRuntime.assignor(configured: ["partition.assignment.strategy": "range"]) == "range")
        let applied = KafkaConsumerRole.committingMember(groupID: "g", assignmentStrategy: KafkaRuntime.defaultAssignor)
        #expect(applied.applied(to: [:])["partition.assignment.strategy"] == KafkaRuntime.defaultAssignor)
        #expect(applied.applied(to: ["partition.assignment.strategy": "range"])["partition.assignment.strategy"] == "range")
    }
}
