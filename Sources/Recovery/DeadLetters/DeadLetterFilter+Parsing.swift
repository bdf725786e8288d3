import Contract

extension DeadLetterFilter {
    /// A filter criterion that could not be read, with the message an operator sees.
    public struct ParseProblem: Error, Sendable, Equatable {
        /// Which criterion (`since`, `wallet`, …).
        public var name: String
        /// What is wrong, in one line.
        public var message: String
    }

    /// The filter named by `fields` (the CLI's options and the console's query use the same names:
    /// `code`, `program`, `wallet`, `since`, `until`, `request-id`, `limit`); empty values are absent.
    /// Without `limit` the filter keeps the newest `defaultLimit` matches; a limit above
    /// `maximumLimit` is read as `maximumLimit`.
    public static func parse(_ fields: [String: String], nowMs: Int64) throws(ParseProblem) -> DeadLetterFilter {
        func value(_ name: String) -> String? { fields[name].flatMap { $0.isEmpty ? nil : $0 } }
        var filter = DeadLetterFilter()
        filter.code = value("code")
        filter.program = value("program")
        if let wallet = value("wallet") {
            guard let parsed = Wallet(rawValue: wallet) else {
                throw ParseProblem(name: "wallet", message: "--wallet must be apple_pay, google_wallet or google_pay")
            }
            filter.wallet = parsed
        }
        filter.sinceMs = try value("since").map { text throws(ParseProblem) in try time(text, name: "since", nowMs: nowMs) }
        filter.untilMs = try value("until").map { text throws(ParseProblem) in try time(text, name: "until", nowMs: nowMs) }
        filter.requestID = value("request-id")
        filter.limit = defaultLimit
        if let text = value("limit") {
            guard text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                  text.contains(where: { $0 != "0" })
            else {
                throw ParseProblem(name: "limit", message: "--limit must be a whole number from 1 (at most \(maximumLimit) are kept), got '\(text)'")
            }
            filter.limit = Int(text).map { min($0, maximumLimit) } ?? maximumLimit
        }
        return filter
    }

    /// RFC 3339, or an age (`90s`, `30m`, `2h`, `7d`) before `nowMs`.
    public static func time(_ text: String, name: String, nowMs: Int64) throws(ParseProblem) -> Int64 {
        if let parsed = RFC3339.parse(text) { return parsed }
        let units: [Character: Int64] = ["s": 1_000, "m": 60_000, "h": 3_600_000, "d": 86_400_000]
        if let unit = text.last, let scale = units[unit], let amount = Int64(text.dropLast()), amount >= 0 {
            let (age, overflow) = amount.multipliedReportingOverflow(by: scale)
            guard !overflow, age <= nowMs else {
                throw ParseProblem(name: name, message: "--\(name) '\(text)' reaches back before 1970; give a shorter age or an RFC 3339 time")
            }
            return nowMs - age
        }
        throw ParseProblem(name: name, message: "--\(name) must be RFC 3339 (2026-11-29T10:00:00Z) or an age like 30m, 2h, 7d; got '\(text)'")
    }
}
