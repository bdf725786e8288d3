import Observability
@testable import ProvisionerCLI
import Testing

/// `provisioner dlq --since/--until`: ages and times are parsed without overflow.
@Suite("dlq --since and --until parsing", .timeLimit(.minutes(5)))
struct DLQTimeTests {
    @Test("an age too long for Int64 milliseconds is a usage error, not a trap")
    func hugeAgesAreRefused() throws {
        for text in ["999999999999999d", "9223372036854775807s", "106751991167d", "999999999999h"] {
            let error = #expect(throws: UsageError.self, "\(text)") { try DLQCommand.time(text, name: "since") }
            #expect(error?.message.contains("--since") == true, "\(error?.message ?? "")")
        }
    }

    @Test("ordinary ages and RFC 3339 times still parse")
    func ordinaryTimesParse() throws {
        let before = Timestamps.nowMs()
        let age = try DLQCommand.time("2h", name: "since")
        #expect(abs(before - 7_200_000 - age) < 60_000)
        #expect(try DLQCommand.time("2026-11-29T10:00:00Z", name: "until") == 1_795_946_400_000)
        #expect(throws: UsageError.self) { try DLQCommand.time("-5m", name: "since") }
    }
}
