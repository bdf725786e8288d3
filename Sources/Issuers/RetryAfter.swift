import Contract

/// Reads a `Retry-After` header (RFC 9110 section 10.2.3): delay-seconds or an IMF-fixdate.
enum RetryAfter {
    /// The wait in milliseconds from `nowMs` (wall clock), or `nil` when the value is neither form.
    /// A date in the past means no wait.
    static func milliseconds(_ value: String, nowMs: Int64) -> Int64? {
        let text = value.trimmingSpaces()
        if !text.isEmpty, text.utf8.count <= 9, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
           let seconds = Int64(text) {
            return seconds * 1000
        }
        guard let dateMs = imfFixdateMilliseconds(text) else { return nil }
        return max(0, dateMs - nowMs)
    }

    /// `Sun, 06 Nov 1994 08:49:37 GMT` → epoch milliseconds.
    static func imfFixdateMilliseconds(_ text: String) -> Int64? {
        let parts = text.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 6, parts[0].count == 4, parts[0].hasSuffix(","), parts[5] == "GMT",
              parts[1].count == 2, let day = Int(parts[1]), let year = Int(parts[3]), parts[3].count == 4
        else { return nil }
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        guard let monthIndex = months.firstIndex(of: String(parts[2])) else { return nil }
        let clock = parts[4].split(separator: ":", omittingEmptySubsequences: false)
        guard clock.count == 3, clock.allSatisfy({ $0.count == 2 }), let hour = Int(clock[0]), let minute = Int(clock[1]),
              let second = Int(clock[2]), (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second),
              (1...31).contains(day)
        else { return nil }
        let days = RFC3339.daysFromCivil(year: year, month: monthIndex + 1, day: day)
        return (Int64(days) * 86_400 + Int64(hour * 3600 + minute * 60 + second)) * 1000
    }
}
