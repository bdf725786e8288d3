import Contract
import Testing

@Suite("RFC 3339 timestamps", .timeLimit(.minutes(5)))
struct RFC3339Tests {
    @Test func parsesZuluOffsetsAndFractions() {
        #expect(RFC3339.parse("1970-01-01T00:00:00Z") == 0)
        #expect(RFC3339.parse("1970-01-01T00:00:00.001Z") == 1)
        #expect(RFC3339.parse("1970-01-01T00:00:00.5Z") == 500)
        #expect(RFC3339.parse("1970-01-01T00:00:00.123456789Z") == 123)
        #expect(RFC3339.parse("2026-11-29T10:00:00.000Z") == 1_795_946_400_000)
        #expect(RFC3339.parse("2026-11-29T11:00:00+01:00") == 1_795_946_400_000)
        #expect(RFC3339.parse("2026-11-29T04:30:00-05:30") == 1_795_946_400_000)
        #expect(RFC3339.parse("2026-11-29t10:00:00z") == 1_795_946_400_000)
        #expect(RFC3339.parse("2024-02-29T00:00:00Z") == 1_709_164_800_000)
        #expect(RFC3339.parse("1969-12-31T23:59:59.999Z") == -1)
    }

    @Test(arguments: ["2026-11-29T10:00:00", "2026-11-29 10:00:00Z", "2026-13-01T00:00:00Z", "2026-02-29T00:00:00Z",
                      "2026-04-31T00:00:00Z", "2026-11-29T24:00:00Z", "2026-11-29T10:60:00Z", "2026-11-29T10:00:60Z",
                      "2026-11-29T10:00:00.Z", "2026-11-29T10:00:00+0100", "2026-11-29T10:00:00+24:00", "26-11-29T10:00:00Z",
                      "2026-11-29T10:00:00Zjunk", "", "2026-11-29"])
    func rejectsEverythingElse(_ text: String) {
        #expect(RFC3339.parse(text) == nil)
    }

    @Test func formatsUTCWithMilliseconds() {
        #expect(RFC3339.format(milliseconds: 0) == "1970-01-01T00:00:00.000Z")
        #expect(RFC3339.format(milliseconds: 1_795_946_400_123) == "2026-11-29T10:00:00.123Z")
        #expect(RFC3339.format(milliseconds: -1) == "1969-12-31T23:59:59.999Z")
        for milliseconds: Int64 in [1, 951_782_400_000, 4_102_444_799_999, 1_709_164_800_000] {
            #expect(RFC3339.parse(RFC3339.format(milliseconds: milliseconds)) == milliseconds)
        }
    }
}
