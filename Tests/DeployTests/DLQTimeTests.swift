import Observability
@testable import ProvisionerCLI
import Recovery
import Testing

/// `provisioner dlq --since/--until`: ages and times are parsed without overflow; ages print as `dlq list` and the console show them.
@Suite("dlq --since and --until parsing; the age dlq list prints", .timeLimit(.minutes(5)))
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

    @Test("the age dlq list and the console print: whole units, truncated, each boundary; negative is 0s")
    func agesPrint() {
        let cases: [(Int64, String)] = [(-5_000, "0s"), (0, "0s"), (59_999, "59s"), (60_000, "1m0s"), (185_000, "3m5s"),
                                        (3_599_999, "59m59s"), (3_600_000, "1h0m"), (7_620_000, "2h7m"), (86_399_999, "23h59m"),
                                        (86_400_000, "1d0h"), (349_200_000, "4d1h")]
        for (ms, text) in cases { #expect(DeadLetterView.age(ms) == text, "\(ms) ms") }
    }
}
