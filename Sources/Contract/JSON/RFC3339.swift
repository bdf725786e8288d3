/// RFC 3339 timestamps ⇄ epoch milliseconds.
///
/// Accepted: `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`, `T`/`Z` in either case, any number of
/// fraction digits (truncated to milliseconds). Rejected: leap second 60, missing offset, out-of-range
/// fields, day not in the month. Written: `YYYY-MM-DDTHH:MM:SS.mmmZ` in UTC.
public enum RFC3339 {
    /// Parses a timestamp to epoch milliseconds, or `nil` when it is not RFC 3339.
    public static func parse(_ text: String) -> Int64? {
        let b = Array(text.utf8)
        guard b.count >= 20 else { return nil }
        func digits(_ start: Int, _ count: Int) -> Int? {
            guard start + count <= b.count else { return nil }
            var value = 0
            for index in start..<(start + count) {
                let byte = b[index]
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = digits(0, 4), b[4] == UInt8(ascii: "-"), let month = digits(5, 2), b[7] == UInt8(ascii: "-"),
              let day = digits(8, 2), b[10] == UInt8(ascii: "T") || b[10] == UInt8(ascii: "t"),
              let hour = digits(11, 2), b[13] == UInt8(ascii: ":"), let minute = digits(14, 2),
              b[16] == UInt8(ascii: ":"), let second = digits(17, 2)
        else { return nil }
        guard (1...12).contains(month), day >= 1, day <= daysInMonth(year: year, month: month),
              hour <= 23, minute <= 59, second <= 59
        else { return nil }
        var index = 19
        var milliseconds = 0
        if b[index] == UInt8(ascii: ".") {
            index += 1
            let start = index
            while index < b.count, b[index] >= UInt8(ascii: "0"), b[index] <= UInt8(ascii: "9") {
                if index - start < 3 { milliseconds = milliseconds * 10 + Int(b[index] - UInt8(ascii: "0")) }
                index += 1
            }
            let fractionDigits = index - start
            guard fractionDigits > 0 else { return nil }
            if fractionDigits < 3 {
                for _ in fractionDigits..<3 { milliseconds *= 10 }
            }
        }
        guard index < b.count else { return nil }
        var offsetMinutes = 0
        switch b[index] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            index += 1
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            let sign = b[index] == UInt8(ascii: "-") ? -1 : 1
            guard let offsetHour = digits(index + 1, 2), index + 3 < b.count, b[index + 3] == UInt8(ascii: ":"),
                  let offsetMinute = digits(index + 4, 2), offsetHour <= 23, offsetMinute <= 59
            else { return nil }
            offsetMinutes = sign * (offsetHour * 60 + offsetMinute)
            index += 6
        default:
            return nil
        }
        guard index == b.count else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = Int64(days) * 86_400 + Int64(hour * 3600 + minute * 60 + second) - Int64(offsetMinutes * 60)
        return seconds * 1000 + Int64(milliseconds)
    }

    /// Formats epoch milliseconds as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
    public static func format(milliseconds: Int64) -> String {
        String(unsafeUninitializedCapacity: length) { write(milliseconds: milliseconds, into: $0) }
    }

    /// Appends the text of `format(milliseconds:)` to `output` (no intermediate string).
    static func append(milliseconds: Int64, to output: inout [UInt8]) {
        let start = output.count
        output.append(contentsOf: repeatElement(0, count: length))
        output.withUnsafeMutableBufferPointer { whole in
            _ = write(milliseconds: milliseconds, into: UnsafeMutableBufferPointer(rebasing: whole[start...]))
        }
    }

    /// The length of every formatted timestamp: `YYYY-MM-DDTHH:MM:SS.mmmZ`.
    private static let length = 24

    /// Writes `YYYY-MM-DDTHH:MM:SS.mmmZ` at the start of `out` (24 bytes); returns 24.
    private static func write(milliseconds: Int64, into out: UnsafeMutableBufferPointer<UInt8>) -> Int {
        let totalSeconds = milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000
        let millis = Int(milliseconds - totalSeconds * 1000)
        let days = totalSeconds >= 0 ? totalSeconds / 86_400 : (totalSeconds - 86_399) / 86_400
        let secondOfDay = Int(totalSeconds - days * 86_400)
        let (year, month, day) = civilFromDays(Int(days))
        var at = 0
        func put(_ value: Int, _ width: Int) {
            var remaining = value
            for offset in stride(from: width - 1, through: 0, by: -1) {
                out[at + offset] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: remaining % 10)
                remaining /= 10
            }
            at += width
        }
        func put(_ character: Unicode.Scalar) {
            out[at] = UInt8(ascii: character)
            at += 1
        }
        put(year, 4); put("-"); put(month, 2); put("-"); put(day, 2); put("T")
        put(secondOfDay / 3600, 2); put(":"); put(secondOfDay / 60 % 60, 2); put(":"); put(secondOfDay % 60, 2)
        put("."); put(millis, 3); put("Z")
        return length
    }

    private static func isLeapYear(_ year: Int) -> Bool {
        year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    }

    private static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: isLeapYear(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 (proleptic Gregorian), after Howard Hinnant's algorithm.
    package static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func civilFromDays(_ days: Int) -> (Int, Int, Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
