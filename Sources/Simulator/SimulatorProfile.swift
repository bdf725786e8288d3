import Contract

/// The simulator's load profile: latency and faults for cards without a magic suffix, extra
/// programs and credentials, and switches for long runs.
///
/// File format (`--profile FILE`, `POST /_sim/profile`), every key optional, unknown keys rejected:
/// ```json
/// {
///   "seed": 42,                          // repeatable draws; omit for a random seed
///   "record_calls": true,                // keep the /_sim/calls log (turn off for long benchmarks)
///   "hang_ms": 600000,                   // how long a hang lasts before a late 504 frees the socket
///   "repeat_provisioning": "conflict",   // or "allow": same card, wallet and device again → 409
///   "apple_ephemeral_key_reuse": 16,     // Apple payloads per ephemeral key and leaf (1: fresh key each)
///   "all": { ...load rule... },          // for every issuer without its own rule
///   "issuers": { "imprint": { ...load rule... }, "dcs": {}, "gnosis": {}, "worldpay": {} },
///   "programs": { "acme-imprint": {"issuer": "imprint", "api_key": "k", "retiring_api_keys": ["old"]} },
///   "known_programs": { ... }            // written by GET /_sim/profile, ignored when read
/// }
/// ```
/// A load rule is described at `LoadRule`; an issuer's rule replaces `all` for that issuer (no
/// merging). Profile programs are added to `SimulatorProgram.defaults` (a profile program with a
/// default's name replaces it).
public struct SimulatorProfile: Sendable, Hashable {
    /// Seed for the latency and fault draws; nil picks a random one.
    public var seed: UInt64?
    /// Whether `/_sim/calls` records calls.
    public var recordCalls: Bool
    /// How long a hanging call waits before its late 504.
    public var hangMilliseconds: Int
    /// Whether provisioning the same card into the same wallet on the same device again answers 409.
    public var conflictOnRepeatProvisioning: Bool
    /// How many Apple payloads share one ephemeral key per leaf certificate (each with its own IV).
    public var appleEphemeralKeyReuse: Int
    /// The rule for issuers without their own.
    public var allIssuers: LoadRule
    /// Rules per issuer prefix.
    public var issuerRules: [IssuerKind: LoadRule]
    /// Programs added to the defaults.
    public var programs: [SimulatorProgram]

    /// Creates a profile; the defaults answer at once, inject no faults and know only the default programs.
    public init(seed: UInt64? = nil, recordCalls: Bool = true, hangMilliseconds: Int = 600_000,
                conflictOnRepeatProvisioning: Bool = true, appleEphemeralKeyReuse: Int = 16,
                allIssuers: LoadRule = LoadRule(), issuerRules: [IssuerKind: LoadRule] = [:],
                programs: [SimulatorProgram] = []) {
        self.seed = seed
        self.recordCalls = recordCalls
        self.hangMilliseconds = hangMilliseconds
        self.conflictOnRepeatProvisioning = conflictOnRepeatProvisioning
        self.appleEphemeralKeyReuse = appleEphemeralKeyReuse
        self.allIssuers = allIssuers
        self.issuerRules = issuerRules
        self.programs = programs
    }

    /// The rule in force for `issuer`.
    public func rule(for issuer: IssuerKind) -> LoadRule {
        issuerRules[issuer] ?? allIssuers
    }

    /// The default programs with this profile's programs added (same name: the profile's wins).
    public var effectivePrograms: [SimulatorProgram] {
        var byName: [String: SimulatorProgram] = [:]
        var order: [String] = []
        for program in SimulatorProgram.defaults + programs {
            if byName.updateValue(program, forKey: program.name) == nil { order.append(program.name) }
        }
        return order.compactMap { byName[$0] }
    }

    // MARK: - Reading

    /// Parses a profile document.
    public init(json bytes: [UInt8]) throws(SimulatorError) {
        let document: JSONValue
        do {
            document = try JSONParser(maxDepth: 16, maxBytes: 1 << 20).parse(bytes)
        } catch {
            throw Self.invalid("the profile is not valid JSON (\(error)); fix the file")
        }
        guard case .object(let members) = document else { throw Self.invalid("the profile must be a JSON object") }
        try Self.rejectUnknown(members, allowed: ["seed", "record_calls", "hang_ms", "repeat_provisioning",
                                                  "apple_ephemeral_key_reuse", "all", "issuers", "programs", "known_programs"], path: "")
        self.init()
        if let value = members["seed"] {
            guard let seed = value.int64Value, seed >= 0 else { throw Self.invalid("seed must be a non-negative integer") }
            self.seed = UInt64(seed)
        }
        if let value = members["record_calls"] {
            guard let flag = value.boolValue else { throw Self.invalid("record_calls must be true or false") }
            recordCalls = flag
        }
        if let value = members["hang_ms"] {
            hangMilliseconds = Int(try Self.number(value, path: "hang_ms", range: 1...86_400_000))
        }
        if let value = members["repeat_provisioning"] {
            switch value.stringValue {
            case "conflict": conflictOnRepeatProvisioning = true
            case "allow": conflictOnRepeatProvisioning = false
            default: throw Self.invalid("repeat_provisioning must be \"conflict\" or \"allow\"")
            }
        }
        if let value = members["apple_ephemeral_key_reuse"] {
            appleEphemeralKeyReuse = Int(try Self.number(value, path: "apple_ephemeral_key_reuse", range: 1...1_000_000))
        }
        if let value = members["all"] {
            allIssuers = try Self.rule(value, path: "all")
        }
        if let value = members["issuers"] {
            guard case .object(let rules) = value else { throw Self.invalid("issuers must be an object keyed by issuer") }
            for (name, ruleValue) in rules {
                guard let issuer = IssuerKind(rawValue: name) else {
                    throw Self.invalid("issuers.\(name) is not an issuer; use imprint, dcs, gnosis or worldpay")
                }
                issuerRules[issuer] = try Self.rule(ruleValue, path: "issuers.\(name)")
            }
        }
        if let value = members["programs"] {
            guard case .object(let entries) = value else { throw Self.invalid("programs must be an object keyed by program name") }
            for name in entries.keys.sorted() {
                programs.append(try Self.program(name: name, entries[name] ?? .null))
            }
            try Self.checkUniqueCredentials(effectivePrograms)
        }
    }

    /// Reads and parses a profile file.
    public static func load(path: String) throws(SimulatorError) -> SimulatorProfile {
        guard let bytes = ProfileFile.contents(of: path) else {
            throw SimulatorError(code: .unreadableProfile, message: "cannot read the profile file '\(path)'; check the path and permissions")
        }
        do {
            return try SimulatorProfile(json: bytes)
        } catch {
            throw SimulatorError(code: error.code, message: "\(path): \(error.message)")
        }
    }

    private static func invalid(_ message: String) -> SimulatorError {
        SimulatorError(code: .invalidProfile, message: message)
    }

    private static func rejectUnknown(_ members: [String: JSONValue], allowed: Set<String>, path: String) throws(SimulatorError) {
        if let unknown = members.keys.filter({ !allowed.contains($0) }).sorted().first {
            let location = path.isEmpty ? unknown : "\(path).\(unknown)"
            throw invalid("unknown key \(location); allowed here: \(allowed.sorted().joined(separator: ", "))")
        }
    }

    private static func number(_ value: JSONValue, path: String, range: ClosedRange<Double>) throws(SimulatorError) -> Double {
        guard let number = value.numberValue?.doubleValue, number.isFinite, range.contains(number) else {
            throw invalid("\(path) must be a number from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }

    private static func rule(_ value: JSONValue, path: String) throws(SimulatorError) -> LoadRule {
        guard case .object(let members) = value else { throw invalid("\(path) must be an object (a load rule)") }
        try rejectUnknown(members, allowed: ["latency", "tail", "error_rates", "retry_after_seconds", "hang_rate"], path: path)
        var rule = LoadRule()
        if let latency = members["latency"] {
            rule.latency = try distribution(latency, path: "\(path).latency")
        }
        if let tail = members["tail"] {
            guard case .object(let tailMembers) = tail else { throw invalid("\(path).tail must be an object") }
            try rejectUnknown(tailMembers, allowed: ["probability", "latency_ms"], path: "\(path).tail")
            guard let probability = tailMembers["probability"], let latency = tailMembers["latency_ms"] else {
                throw invalid("\(path).tail needs probability and latency_ms")
            }
            rule.tail = LatencyTail(probability: try number(probability, path: "\(path).tail.probability", range: 0...1),
                                    milliseconds: try number(latency, path: "\(path).tail.latency_ms", range: 0...86_400_000))
        }
        if let rates = members["error_rates"] {
            guard case .object(let rateMembers) = rates else { throw invalid("\(path).error_rates must be an object") }
            try rejectUnknown(rateMembers, allowed: ["503", "504", "429"], path: "\(path).error_rates")
            if let rate = rateMembers["503"] { rule.unavailableRate = try number(rate, path: "\(path).error_rates.503", range: 0...1) }
            if let rate = rateMembers["504"] { rule.gatewayTimeoutRate = try number(rate, path: "\(path).error_rates.504", range: 0...1) }
            if let rate = rateMembers["429"] { rule.rateLimitedRate = try number(rate, path: "\(path).error_rates.429", range: 0...1) }
        }
        if let retryAfter = members["retry_after_seconds"] {
            rule.retryAfterSeconds = Int(try number(retryAfter, path: "\(path).retry_after_seconds", range: 0...86_400))
        }
        if let hang = members["hang_rate"] {
            rule.hangRate = try number(hang, path: "\(path).hang_rate", range: 0...1)
        }
        let total = rule.unavailableRate + rule.gatewayTimeoutRate + rule.rateLimitedRate + rule.hangRate
        guard total <= 1 + 1e-9 else {
            throw invalid("\(path): error rates and hang_rate add up to \(total); keep the sum at most 1")
        }
        return rule
    }

    private static func distribution(_ value: JSONValue, path: String) throws(SimulatorError) -> LatencyDistribution {
        guard case .object(let members) = value, let kind = members["distribution"]?.stringValue else {
            throw invalid("\(path) must be an object with distribution fixed, uniform or lognormal")
        }
        func field(_ name: String, _ range: ClosedRange<Double>) throws(SimulatorError) -> Double {
            guard let raw = members[name] else { throw invalid("\(path).\(name) is required for the \(kind) distribution") }
            return try number(raw, path: "\(path).\(name)", range: range)
        }
        switch kind {
        case "fixed":
            try rejectUnknown(members, allowed: ["distribution", "ms"], path: path)
            return .fixed(milliseconds: try field("ms", 0...86_400_000))
        case "uniform":
            try rejectUnknown(members, allowed: ["distribution", "min_ms", "max_ms"], path: path)
            let minimum = try field("min_ms", 0...86_400_000)
            let maximum = try field("max_ms", 0...86_400_000)
            guard minimum <= maximum else { throw invalid("\(path).min_ms must not exceed max_ms") }
            return .uniform(minimumMilliseconds: minimum, maximumMilliseconds: maximum)
        case "lognormal":
            try rejectUnknown(members, allowed: ["distribution", "median_ms", "sigma", "max_ms"], path: path)
            let median = try field("median_ms", 0...86_400_000)
            let sigma = try field("sigma", 0...10)
            let maximum: Double? = members["max_ms"] == nil ? nil : try field("max_ms", 0...86_400_000)
            return .logNormal(medianMilliseconds: median, sigma: sigma, maximumMilliseconds: maximum)
        default:
            throw invalid("\(path).distribution must be fixed, uniform or lognormal, not \(kind)")
        }
    }

    private static func program(name: String, _ value: JSONValue) throws(SimulatorError) -> SimulatorProgram {
        let path = "programs.\(name)"
        guard !name.isEmpty, name.utf8.count <= 64 else { throw invalid("program names must be 1-64 characters") }
        guard case .object(let members) = value else { throw invalid("\(path) must be an object") }
        try rejectUnknown(members, allowed: ["issuer", "api_key", "api_secret", "auth_header", "retiring_api_keys"], path: path)
        guard let issuerName = members["issuer"]?.stringValue, let issuer = IssuerKind(rawValue: issuerName) else {
            throw invalid("\(path).issuer must be imprint, dcs, gnosis or worldpay")
        }
        guard let apiKey = members["api_key"]?.stringValue, !apiKey.isEmpty, !apiKey.contains(where: \.isWhitespace) else {
            throw invalid("\(path).api_key must be a non-empty string without spaces")
        }
        var program = SimulatorProgram(name: name, issuer: issuer, apiKey: Sensitive(apiKey))
        if let retiring = members["retiring_api_keys"] {
            guard let keys = retiring.arrayValue?.compactMap(\.stringValue), keys.count == retiring.arrayValue?.count,
                  keys.allSatisfy({ !$0.isEmpty && !$0.contains(where: \.isWhitespace) })
            else { throw invalid("\(path).retiring_api_keys must be an array of non-empty strings without spaces") }
            program.retiringAPIKeys = keys.map(Sensitive.init)
        }
        if let secret = members["api_secret"] {
            guard issuer == .dcs else { throw invalid("\(path).api_secret is only for DCS programs") }
            guard let text = secret.stringValue, !text.isEmpty else { throw invalid("\(path).api_secret must be a non-empty string") }
            program.apiSecret = Sensitive(text)
        } else if issuer == .dcs {
            throw invalid("\(path).api_secret is required for DCS programs (the X-DAPI-SIGN key)")
        }
        if let header = members["auth_header"] {
            guard issuer != .dcs else { throw invalid("\(path).auth_header does not apply to DCS (it signs X-DAPI-* headers)") }
            guard let text = header.stringValue, !text.isEmpty,
                  text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: ":") })
            else { throw invalid("\(path).auth_header must be an HTTP header name") }
            program.authHeader = text
        }
        return program
    }

    private static func checkUniqueCredentials(_ programs: [SimulatorProgram]) throws(SimulatorError) {
        var seen: [String: String] = [:]
        for program in programs {
            for apiKey in program.acceptedAPIKeys {
                let key = "\(program.issuer.rawValue) \(apiKey.revealed)"
                if let other = seen[key], other != program.name {
                    throw invalid("programs \(other) and \(program.name) share one \(program.issuer.rawValue) API key; give each its own")
                }
                seen[key] = program.name
            }
        }
    }

    // MARK: - Writing

    /// The profile as JSON, in the file format, except that programs appear only as
    /// `"known_programs": {name: issuer}` (defaults included): `GET /_sim/profile` never shows a
    /// credential. Reading ignores `known_programs`, so the output reads back to the same rules
    /// (without the profile's extra programs).
    public func jsonValue() -> JSONValue {
        var members: [String: JSONValue] = [
            "record_calls": .bool(recordCalls),
            "hang_ms": .integer(Int64(hangMilliseconds)),
            "repeat_provisioning": .string(conflictOnRepeatProvisioning ? "conflict" : "allow"),
            "apple_ephemeral_key_reuse": .integer(Int64(appleEphemeralKeyReuse)),
            "all": Self.ruleJSON(allIssuers),
        ]
        if let seed { members["seed"] = .number(JSONNumber(literal: String(seed)) ?? JSONNumber(0)) }
        var rules: [String: JSONValue] = [:]
        for (issuer, rule) in issuerRules { rules[issuer.rawValue] = Self.ruleJSON(rule) }
        members["issuers"] = .object(rules)
        var programEntries: [String: JSONValue] = [:]
        for program in effectivePrograms {
            programEntries[program.name] = .string(program.issuer.rawValue)
        }
        members["known_programs"] = .object(programEntries)
        return .object(members)
    }

    private static func numberJSON(_ value: Double) -> JSONValue {
        if value == value.rounded(), abs(value) < 1e15 { return .integer(Int64(value)) }
        return .number(JSONNumber(literal: String(value)) ?? JSONNumber(0))
    }

    private static func ruleJSON(_ rule: LoadRule) -> JSONValue {
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
