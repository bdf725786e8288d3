import Kafka
import Testing

/// `KafkaRuntime`: the loaded librdkafka's version, and the default assignor chosen from it.
@Suite("KafkaRuntime: the loaded librdkafka and the default assignor")
struct KafkaRuntimeTests {
    @Test("roundrobin below 2.10.0, cooperative-sticky from 2.10.0", arguments: [
        ("2.0.2", "roundrobin"), ("2.9.9", "roundrobin"), ("1.9.2", "roundrobin"), ("2.10.0", "cooperative-sticky"),
        ("2.10.1", "cooperative-sticky"), ("2.16.0", "cooperative-sticky"), ("3.0.0", "cooperative-sticky"),
    ])
    func assignorByVersion(version: String, assignor: String) throws {
        let release = try #require(KafkaRuntimeVersion(version))
        #expect(KafkaRuntime.defaultAssignor(for: release) == assignor, "\(version)")
    }

    @Test("packed versions (rd_kafka_version, RD_KAFKA_VERSION) read as major.minor.revision", arguments: [
        (0x020002ff, "2.0.2", "roundrobin"), (0x020909ff, "2.9.9", "roundrobin"), (0x020a0000, "2.10.0", "cooperative-sticky"),
        (0x020a00ff, "2.10.0", "cooperative-sticky"), (0x021000ff, "2.16.0", "cooperative-sticky"),
    ])
    func packed(packed: Int, text: String, assignor: String) {
        let release = KafkaRuntimeVersion(packed: packed)
        #expect(release.description == text)
        #expect(release == KafkaRuntimeVersion(text))
        #expect(KafkaRuntime.defaultAssignor(for: release) == assignor)
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
        #expect(KafkaRuntime.assignor(configured: [:]) == KafkaRuntime.defaultAssignor(for: KafkaRuntime.release))
        #expect(KafkaRuntime.assignor(configured: ["partition.assignment.strategy": "range"]) == "range")
        let applied = KafkaConsumerRole.committingMember(groupID: "g", assignmentStrategy: KafkaRuntime.defaultAssignor)
        #expect(applied.applied(to: [:])["partition.assignment.strategy"] == KafkaRuntime.defaultAssignor)
        #expect(applied.applied(to: ["partition.assignment.strategy": "range"])["partition.assignment.strategy"] == "range")
    }
}
