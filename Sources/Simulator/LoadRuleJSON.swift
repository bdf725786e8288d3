import Contract

/// A load rule's form in a profile file (`issuers.<name>`, `all`): read with every key and range
/// checked, and written back in the same form.
enum LoadRuleJSON {
    /// The rule `value` (at `path` in the profile) describes, with every key and range checked.
    static func rule(_ value: JSONValue, path: String) throws(SimulatorError) -> LoadRule {
        guard case .object(let members) = value else { throw SimulatorProfile.invalid("\(path) must be an object (a load rule)") }
        try SimulatorProfile.rejectUnknown(members, allowed: ["latency", "tail", "error_rates", "retry_after_seconds", "hang_rate"], path: path)
        var rule = LoadRule()
        if let latency = members["latency"] {
            rule.latency = try distribution(latency, path: "\(path).latency")
        }
        if let tail = members["tail"] {
            guard case .object(let tailMembers) = tail else { throw SimulatorProfile.invalid("\(path).tail must be an object") }
            try SimulatorProfile.rejectUnknown(tailMembers, allowed: ["probability", "latency_ms"], path: "\(path).tail")
            guard let probability = tailMembers["probability"], let latency = tailMembers["latency_ms"] else {
                throw SimulatorProfile.invalid("\(path).tail needs probability and latency_ms")
            }
            rule.tail = LatencyTail(probability: try SimulatorProfile.number(probability, path: "\(path).tail.probability", range: 0...1),
                                    milliseconds: try SimulatorProfile.number(latency, path: "\(path).tail.latency_ms", range: 0...86_400_000))
        }
        if let rates = members["error_rates"] {
            guard case .object(let rateMembers) = rates else { throw SimulatorProfile.invalid("\(path).error_rates must be an object") }
            try SimulatorProfile.rejectUnknown(rateMembers, allowed: ["503", "504", "429"], path: "\(path).error_rates")
            if let rate = rateMembers["503"] { rule.unavailableRate = try SimulatorProfile.number(rate, path: "\(path).error_rates.503", range: 0...1) }
            if let rate = rateMembers["504"] { rule.gatewayTimeoutRate = try SimulatorProfile.number(rate, path: "\(path).error_rates.504", range: 0...1) }
            if let rate = rateMembers["429"] { rule.rateLimitedRate = try SimulatorProfile.number(rate, path: "\(path).error_rates.429", range: 0...1) }
        }
        if let retryAfter = members["retry_after_seconds"] {
            rule.retryAfterSeconds = Int(try SimulatorProfile.number(retryAfter, path: "\(path).retry_after_seconds", range: 0...86_400))
        }
        if let hang = members["hang_rate"] {
            rule.hangRate = try SimulatorProfile.number(hang, path: "\(path).hang_rate", range: 0...1)
        }
        let total = rule.unavailableRate + rule.gatewayTimeoutRate + rule.rateLimitedRate + rule.hangRate
        guard total <= 1 + 1e-9 else {
            throw SimulatorProfile.invalid("\(path): error rates and hang_rate add up to \(total); keep the sum at most 1")
        }
        return rule
    }

    /// The latency distribution `value` describes.
    private static func distribution(_ value: JSONValue, path: String) throws(SimulatorError) -> LatencyDistribution {
        guard case .object(let members) = value, let kind = members["distribution"]?.stringValue else {
            throw SimulatorProfile.invalid("\(path) must be an object with distribution fixed, uniform or lognormal")
        }
        func field(_ name: String, _ range: ClosedRange<Double>) throws(SimulatorError) -> Double {
            guard let raw = members[name] else { throw SimulatorProfile.invalid("\(path).\(name) is required for the \(kind) distribution") }
            return try SimulatorProfile.number(raw, path: "\(path).\(name)", range: range)
        }
        switch kind {
        case "fixed":
            try SimulatorProfile.rejectUnknown(members, allowed: ["distribution", "ms"], path: path)
            return .fixed(milliseconds: try field("ms", 0...86_400_000))
        case "uniform":
            try SimulatorProfile.rejectUnknown(members, allowed: ["distribution", "min_ms", "max_ms"], path: path)
            let minimum = try field("min_ms", 0...86_400_000)
            let maximum = try field("max_ms", 0...86_400_000)
            guard minimum <= maximum else { throw SimulatorProfile.invalid("\(path).min_ms must not exceed max_ms") }
            return .uniform(minimumMilliseconds: minimum, maximumMilliseconds: maximum)
        case "lognormal":
            try SimulatorProfile.rejectUnknown(members, allowed: ["distribution", "median_ms", "sigma", "max_ms"], path: path)
            let median = try field("median_ms", 0...86_400_000)
            let sigma = try field("sigma", 0...10)
            let maximum: Double? = members["max_ms"] == nil ? nil : try field("max_ms", 0...86_400_000)
            return .logNormal(medianMilliseconds: median, sigma: sigma, maximumMilliseconds: maximum)
        default:
            throw SimulatorProfile.invalid("\(path).distribution must be fixed, uniform or lognormal, not \(kind)")
        }
    }

    /// `value` as a JSON integer when it is whole, else as a number.
    private static func numberJSON(_ value: Double) -> JSONValue {
        if value == value.rounded(), abs(value) < 1e15 { return .integer(Int64(value)) }
        return .number(JSONNumber(literal: String(value)) ?? JSONNumber(0))
    }

    /// `rule` in the profile file's format (reads back to the same rule).
    static func json(_ rule: LoadRule) -> JSONValue {
        let latency: JSONValue
        switch rule.latency {
        case .fixed(let milliseconds):
            latency = .object(["distribution": .string("fixed"), "ms": numberJSON(milliseconds)])
        case .uniform(let minimum, let maximum):
            latency = .object(["distribution": .string("uniform"), "min_ms": numberJSON(minimum), "max_ms": numberJSON(maximum)])
        case .logNormal(let median, let sigma, let maximum):
            var members: [String: JSONValue] = ["distribution": .string("lognormal"), "median_ms": numberJSON(median),
                                                "sigma": numberJSON(sigma)]
            if let maximum { members["max_ms"] = numberJSON(maximum) }
            latency = .object(members)
        }
        var members: [String: JSONValue] = [
            "latency": latency,
            "error_rates": .object(["503": numberJSON(rule.unavailableRate), "504": numberJSON(rule.gatewayTimeoutRate),
                                    "429": numberJSON(rule.rateLimitedRate)]),
            "retry_after_seconds": .integer(Int64(rule.retryAfterSeconds)),
            "hang_rate": numberJSON(rule.hangRate),
        ]
        if let tail = rule.tail {
            members["tail"] = .object(["probability": numberJSON(tail.probability), "latency_ms": numberJSON(tail.milliseconds)])
        }
        return .object(members)
    }
}
