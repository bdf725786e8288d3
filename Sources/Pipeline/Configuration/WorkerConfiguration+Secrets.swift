import Contract

extension WorkerConfiguration {
    /// Secrets named by the configuration that cannot be read (a variable not set, a file
    /// missing, empty or unreadable), and values that `secretValueIssues` refuses: by name only,
    /// never a value.
    static func secretIssues(_ configuration: WorkerConfiguration, reader: SecretReader) -> [ConfigurationIssue] {
        let (values, issues) = readSecrets(configuration, reader: reader)
        return issues + secretValueIssues(configuration, values: values)
    }

    /// The value of every secret `configuration` names that `reader` can read, and an error for
    /// each one it cannot (by key and source, never a value).
    static func readSecrets(_ configuration: WorkerConfiguration, reader: SecretReader) -> ([SecretSource: Sensitive], [ConfigurationIssue]) {
        var values: [SecretSource: Sensitive] = [:]
        var issues: [ConfigurationIssue] = []
        for reference in configuration.secrets {
            switch reader.read(reference.source) {
            case .success(let value): values[reference.source] = value
            case .failure(let problem): issues.append(.init(.error, reference.keyPath, problem.description))
            }
        }
        return (values, issues)
    }

    /// The shortest request signing secret or replay key accepted, in bytes (UTF-8): 256 bits, as
    /// HMAC-SHA256 wants (e.g. `openssl rand -hex 32`).
    public static let minimumSigningKeyBytes = 32

    /// Problems with secret values (`values` by source; sources without a value are left to the
    /// check for missing secrets): a pseudonym key shorter than `Pseudonymizer.minimumKeyBytes`,
    /// and what `signingKeyIssues` refuses. Names keys and sources, never values.
    static func secretValueIssues(_ configuration: WorkerConfiguration, values: [SecretSource: Sensitive]) -> [ConfigurationIssue] {
        var issues: [ConfigurationIssue] = []
        for key in configuration.pseudonymKeyList {
            guard let value = values[key.secret], value.revealed.utf8.count < Pseudonymizer.minimumKeyBytes else { continue }
            issues.append(.init(.error, key.keyPath,
                                "names \(key.secret), whose value is shorter than \(Pseudonymizer.minimumKeyBytes) bytes; "
                                    + "the pseudonym key must be at least \(Pseudonymizer.minimumKeyBytes) random bytes (e.g. 'openssl rand -hex 32')"))
        }
        return issues + signingKeyIssues(configuration, values: values)
    }

    /// Problems with the keys that decide who may be answered (`values` by source): any of a
    /// program's request signing keys (the unnamed one and every named one) or a replay key
    /// shorter than `minimumSigningKeyBytes`, or a replay key equal to a program's signing key
    /// (that program's producers could then sign replays, which the worker lets past the duplicate
    /// horizon, and forge `dlq.mac`), or two programs sharing a signing key (by source or by
    /// value: either program's producers could sign the other's requests). Names keys and
    /// sources, never values; keys without a value are left to the check for missing secrets.
    public static func signingKeyIssues(_ configuration: WorkerConfiguration, values: [SecretSource: Sensitive]) -> [ConfigurationIssue] {
        var issues: [ConfigurationIssue] = []
        let programKeys = configuration.programs.sorted { $0.key < $1.key }.flatMap { name, program in
            program.signingKeys.map { (program: name, key: SecretReference(keyPath: $0.keyPath, source: $0.secret)) }
        }
        for (index, later) in programKeys.enumerated() {
            guard let earlier = programKeys[..<index].first(where: { earlier in
                earlier.program != later.program && (earlier.key.source == later.key.source
                    || values[earlier.key.source].map { value in values[later.key.source]?.revealed == value.revealed } == true)
            }) else { continue }
            issues.append(.init(.error, later.key.keyPath,
                                "names \(later.key.source), the same signing key as \(earlier.key.keyPath) (\(earlier.key.source)); two programs "
                                    + "may not share a signing key, or either program's producers could sign the other's requests"))
        }
        var keys = programKeys.map(\.key)
        let replayKeys = configuration.replayKeyList.map { SecretReference(keyPath: $0.keyPath, source: $0.secret) }
        keys += replayKeys
        for key in keys {
            guard let value = values[key.source], value.revealed.utf8.count < minimumSigningKeyBytes else { continue }
            issues.append(.init(.error, key.keyPath, "names \(key.source), whose value is shorter than \(minimumSigningKeyBytes) bytes; "
                                    + "use at least \(minimumSigningKeyBytes) random bytes (e.g. 'openssl rand -hex 32')"))
        }
        for replay in replayKeys {
            guard let replayValue = values[replay.source] else { continue }
            for key in keys where key.keyPath.hasPrefix("programs.") && values[key.source]?.revealed == replayValue.revealed {
                issues.append(.init(.error, replay.keyPath,
                                    "names \(replay.source), whose value is also \(key.keyPath) (\(key.source)); the replay key "
                                        + "must differ from every program's signing secret, or that program's producers could sign replays"))
            }
        }
        return issues
    }

    /// Reads the secret `name` of `reader`'s section: `<name>_env` (an environment variable) or
    /// `<name>_file` (an absolute path), exactly one of them; nil when neither is set (an error
    /// when `required`).
    static func secretSource(_ reader: inout ConfigurationReader, _ name: String, required: Bool,
                             requirement: String = "is required") -> SecretSource? {
        let variable = reader.string(name + "_env")
        let path = reader.string(name + "_file")
        switch (variable, path) {
        case (let variable?, nil):
            if variable.isEmpty { reader.issues.append(.init(.error, reader.keyPath(name + "_env"), "must name an environment variable")) }
            return .environment(variable)
        case (nil, let path?):
            if !path.hasPrefix("/") { reader.issues.append(.init(.error, reader.keyPath(name + "_file"), "must be an absolute path")) }
            return .file(path)
        case (_?, _?):
            reader.issues.append(.init(.error, reader.keyPath(name + "_file"), "and \(name)_env are both set; name the secret once"))
            return nil
        case (nil, nil):
            if required { reader.issues.append(.init(.error, reader.keyPath(name + "_env"), "\(requirement) (or \(name)_file)")) }
            return nil
        }
    }
}
