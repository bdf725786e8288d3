import CRdKafka

/// Builds librdkafka configuration objects from string properties.
enum KafkaConfiguration {
    /// `defaults` overridden by `overrides`: the caller's properties always win.
    static func merged(defaults: [String: String], overrides: [String: String]) -> [String: String] {
        defaults.merging(overrides) { _, caller in caller }
    }

    /// A new `rd_kafka_conf_t` holding `properties`; the caller owns it.
    static func make(_ properties: [String: String]) throws(KafkaError) -> OpaquePointer {
        if let refusal = KafkaRuntime.refusal(of: properties, on: KafkaRuntime.release) {
            throw KafkaError(code: .invalidArgument, message: refusal, isRetriable: false)
        }
        guard let conf = rd_kafka_conf_new() else {
            throw KafkaError(code: .fail, message: "librdkafka could not allocate a configuration object")
        }
        KafkaSecretRedaction.register(properties)
        var errorText = [CChar](repeating: 0, count: 512)
        for key in properties.keys.sorted() {
            let value = properties[key] ?? ""
            let result = rd_kafka_conf_set(conf, key, value, &errorText, errorText.count)
            if result != RD_KAFKA_CONF_OK {
                rd_kafka_conf_destroy(conf)
                let reason = KafkaSecretRedaction.redact(text(errorText))
                let what = result == RD_KAFKA_CONF_UNKNOWN ? "unknown Kafka property" : "invalid value for Kafka property"
                throw KafkaError(code: .invalidArgument,
                                 message: "\(what) '\(key)': \(reason); fix or remove it (see librdkafka's CONFIGURATION.md)",
                                 isRetriable: false)
            }
        }
        KafkaLog.attach(to: conf)
        return conf
    }

    /// Creates an `rd_kafka_t`; the configuration is consumed on success and destroyed here on failure.
    static func makeHandle(type: rd_kafka_type_t, conf: OpaquePointer, role: String) throws(KafkaError) -> OpaquePointer {
        var errorText = [CChar](repeating: 0, count: 512)
        guard let handle = rd_kafka_new(type, conf, &errorText, errorText.count) else {
            // rd_kafka_new frees the configuration only when it succeeds.
            rd_kafka_conf_destroy(conf)
            throw KafkaError(code: .invalidArgument,
                             message: "could not create the Kafka \(role): \(KafkaSecretRedaction.redact(text(errorText))); check the configuration",
                             isRetriable: false)
        }
        return handle
    }

    /// True for properties whose values must never appear in messages: passwords, passphrases,
    /// secrets, keys, key stores, tokens, JAAS and OAUTHBEARER configurations
    /// (`sasl.oauthbearer.config` carries the principal and extensions, often a client secret).
    static func isSecret(_ key: String) -> Bool {
        let lowered = key.lowercased()
        return ["password", "passphrase", "secret", "key.pem", "keystore", "token", "jaas", "oauthbearer.config"].contains { lowered.contains($0) }
    }

    static func text(_ buffer: [CChar]) -> String {
        buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }
}
