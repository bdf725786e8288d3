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
            allIssuers = try LoadRuleJSON.rule(value, path: "all")
        }
        if let value = members["issuers"] {
            guard case .object(let rules) = value else { throw Self.invalid("issuers must be an object keyed by issuer") }
            for (name, ruleValue) in rules {
                guard let issuer = IssuerKind(rawValue: name) else {
                    throw Self.invalid("issuers.\(name) is not an issuer; use imprint, dcs, gnosis or worldpay")
                }
                issuerRules[issuer] = try LoadRuleJSON.rule(ruleValue, path: "issuers.\(name)")
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

    /// An `invalidProfile` error saying `message`.
    static func invalid(_ message: String) -> SimulatorError {
        SimulatorError(code: .invalidProfile, message: message)
    }

    /// Throws for the first key of `members` (at `path`) that is not `allowed`.
    static func rejectUnknown(_ members: [String: JSONValue], allowed: Set<String>, path: String) throws(SimulatorError) {
        if let unknown = members.keys.filter({ !allowed.contains($0) }).sorted().first {
            let location = path.isEmpty ? unknown : "\(path).\(unknown)"
            throw invalid("unknown key \(location); allowed here: \(allowed.sorted().joined(separator: ", "))")
        }
    }

    /// `value` (at `path`) as a finite number within `range`, else an error naming the range.
    static func number(_ value: JSONValue, path: String, range: ClosedRange<Double>) throws(SimulatorError) -> Double {
        guard let number = value.numberValue?.doubleValue, number.isFinite, range.contains(number) else {
            throw invalid("\(path) must be a number from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
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
            "all": LoadRuleJSON.json(allIssuers),
        ]
        if let seed { members["seed"] = .number(JSONNumber(literal: String(seed)) ?? JSONNumber(0)) }
        var rules: [String: JSONValue] = [:]
        for (issuer, rule) in issuerRules { rules[issuer.rawValue] = LoadRuleJSON.json(rule) }
        members["issuers"] = .object(rules)
        var programEntries: [String: JSONValue] = [:]
        for program in effectivePrograms {
            programEntries[program.name] = .string(program.issuer.rawValue)
        }
        members["known_programs"] = .object(programEntries)
        return .object(members)
    }
}
