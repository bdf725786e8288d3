import Contract

extension ProgramConfiguration {
    /// Reads the section `programs.<name>` from `reader`; nil, with the issues in `reader`, when
    /// the issuer, the base URL or the API key is missing or unreadable.
    static func parse(name: String, _ reader: inout ConfigurationReader) -> ProgramConfiguration? {
        let issuerName = reader.requiredString("issuer")
        let baseURL = reader.requiredString("base_url")
        let apiKey = WorkerConfiguration.secretSource(&reader, "api_key", required: true)
        var issuer: IssuerKind?
        if let issuerName {
            issuer = IssuerKind(rawValue: issuerName)
            if issuer == nil {
                reader.issues.append(.init(.error, reader.keyPath("issuer"), "must be one of imprint, dcs, gnosis, worldpay; found '\(issuerName)'"))
            }
        }
        if let baseURL {
            if baseURL.hasPrefix("http://") {
                if !isLoopback(host: host(ofHTTPURL: baseURL)) {
                    reader.issues.append(.init(.error, reader.keyPath("base_url"),
                                               "is http:// to a host that is not loopback ('\(host(ofHTTPURL: baseURL))'): issuers are reached over https://; plain http:// is only for tests on 127.0.0.0/8, localhost or [::1]"))
                }
            } else if !baseURL.hasPrefix("https://") {
                reader.issues.append(.init(.error, reader.keyPath("base_url"), "must start with https:// (or http:// for loopback tests)"))
            }
        }
        var program = ProgramConfiguration(name: name, issuer: issuer ?? .imprint,
                                           baseURL: (baseURL ?? "").trimmingSuffix("/"), apiKey: apiKey ?? .environment(""))
        program.apiSecret = WorkerConfiguration.secretSource(&reader, "api_secret", required: issuer == .dcs, requirement: "is required for DCS (the X-DAPI-SIGN secret)")
        program.apiKeyHeader = reader.string("api_key_header", default: program.apiKeyHeader)
        program.timeoutMs = reader.integer("timeout_ms", default: program.timeoutMs, in: 50...120_000)
        program.minimumBudgetMs = reader.integer("minimum_budget_ms", default: program.minimumBudgetMs, in: 1...60_000)
        if reader.raw("max_in_flight") != nil { program.maxInFlight = reader.int("max_in_flight", default: 1, in: 1...100_000) }
        if reader.raw("max_unsettled") != nil { program.maxUnsettled = reader.int("max_unsettled", default: 1, in: 1...1_000_000) }
        program.duplicateShare = reader.int("duplicate_share", default: 1, in: 1...1_000)
        var rate = reader.object("rate_limit")
        if !rate.members.isEmpty {
            let perSecond = rate.double("per_second", default: 0, in: 0.001...1_000_000)
            let burst = rate.double("burst", default: max(1, perSecond), in: 1...1_000_000)
            if rate.members["per_second"] == nil { rate.issues.append(.init(.error, rate.keyPath("per_second"), "is required")) }
            program.rateLimit = .init(perSecond: perSecond, burst: burst)
        }
        reader.absorb(rate)
        let googleAPI = reader.string("dcs_google_api", default: "v2")
        if googleAPI != "v1" && googleAPI != "v2" {
            reader.issues.append(.init(.error, reader.keyPath("dcs_google_api"), "must be 'v2' (cardId) or 'v1' (cardMantissa)"))
        }
        program.dcsGoogleAPI = googleAPI
        program.gnosisProvisionPath = reader.string("gnosis_provision_path", default: program.gnosisProvisionPath)
        if !program.gnosisProvisionPath.contains("{id}") {
            reader.issues.append(.init(.error, reader.keyPath("gnosis_provision_path"), "must contain {id} for the card id"))
        }
        program.worldpayMerchantEntity = reader.string("worldpay_merchant_entity", default: program.worldpayMerchantEntity)
        var signing = reader.object("request_signing")
        if !signing.members.isEmpty {
            program.requestSigningKeys = WorkerConfiguration.signingKeys(&signing, "keys")
            if signing.members["secret_env"] != nil || signing.members["secret_file"] != nil || program.requestSigningKeys.isEmpty {
                program.requestSigningSecret = WorkerConfiguration.secretSource(&signing, "secret", required: true)
            }
            program.requestSigningAcceptsV1 = signing.bool("accept_v1", default: false)
            program.requestSigningAcceptsV2 = signing.bool("accept_v2", default: false)
            program.requestSigningMaxSkewMs = signing.integer("max_skew_ms", default: program.requestSigningMaxSkewMs, in: 1_000...3_600_000)
        }
        reader.absorb(signing)
        if let value = reader.raw("reply_topics") {
            program.replyTopics = ReplyRouting.Allowlist.entries(value, keyPath: reader.keyPath("reply_topics"), issues: &reader.issues)
        }
        guard issuer != nil, baseURL != nil, apiKey != nil else { return nil }
        return program
    }

    /// The host of an `http://` URL: between the scheme and the first `/`, `?` or `#`, without
    /// user info or port (`[::1]` keeps its brackets).
    static func host(ofHTTPURL url: String) -> String {
        var authority = Substring(url.dropFirst("http://".count))
        if let end = authority.firstIndex(where: { "/?#".contains($0) }) { authority = authority[..<end] }
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return String(authority) }
            return String(authority[...close])
        }
        if let colon = authority.firstIndex(of: ":") { authority = authority[..<colon] }
        return String(authority)
    }

    /// Whether `host` is a loopback name or address: `localhost`, an IPv4 address in
    /// 127.0.0.0/8 (four decimal octets), or `[::1]`.
    static func isLoopback(host: String) -> Bool {
        let lowered = host.lowercased()
        if lowered == "localhost" || lowered == "[::1]" { return true }
        let octets = lowered.split(separator: ".", omittingEmptySubsequences: false)
        guard octets.count == 4, octets[0] == "127" else { return false }
        return octets.allSatisfy { octet in
            (1...3).contains(octet.utf8.count) && octet.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
                && Int(octet)! <= 255
        }
    }
}

private extension String {
    /// The text without every trailing repetition of `suffix`.
    func trimmingSuffix(_ suffix: String) -> String {
        var text = self
        while text.hasSuffix(suffix) { text.removeLast(suffix.count) }
        return text
    }
}
