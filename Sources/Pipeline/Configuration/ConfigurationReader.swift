import Contract

/// Reads typed values from one JSON object of a configuration, remembering which keys were read
/// so unknown keys can be reported with their full path.
struct ConfigurationReader {
    let path: String
    let members: [String: JSONValue]
    private(set) var read: Set<String> = []
    var issues: [ConfigurationIssue] = []

    init(path: String, value: JSONValue?, issues: inout [ConfigurationIssue]) {
        self.path = path
        switch value {
        case .object(let members)?: self.members = members
        case nil, .null?: self.members = [:]
        case let other?:
            self.members = [:]
            issues.append(.init(.error, path.isEmpty ? "(top level)" : path, "must be an object, found \(other.typeName)"))
        }
    }

    func keyPath(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    mutating func raw(_ key: String) -> JSONValue? {
        read.insert(key)
        guard let value = members[key], !value.isNull else { return nil }
        return value
    }

    mutating func string(_ key: String) -> String? {
        guard let value = raw(key) else { return nil }
        guard let text = value.stringValue else {
            issues.append(.init(.error, keyPath(key), "must be a string, found \(value.typeName)"))
            return nil
        }
        return text
    }

    mutating func string(_ key: String, default fallback: String) -> String { string(key) ?? fallback }

    mutating func requiredString(_ key: String) -> String? {
        if members[key] == nil || members[key]!.isNull {
            read.insert(key)
            issues.append(.init(.error, keyPath(key), "is required"))
            return nil
        }
        guard let text = string(key) else { return nil }
        if text.isEmpty { issues.append(.init(.error, keyPath(key), "must not be empty")) }
        return text
    }

    mutating func integer(_ key: String, default fallback: Int64, in range: ClosedRange<Int64>) -> Int64 {
        guard let value = raw(key) else { return fallback }
        guard let number = value.int64Value else {
            issues.append(.init(.error, keyPath(key), "must be a whole number, found \(value.typeName == "number" ? "a fraction" : value.typeName)"))
            return fallback
        }
        guard range.contains(number) else {
            issues.append(.init(.error, keyPath(key), "must be from \(range.lowerBound) to \(range.upperBound), found \(number)"))
            return fallback
        }
        return number
    }

    mutating func int(_ key: String, default fallback: Int, in range: ClosedRange<Int>) -> Int {
        Int(integer(key, default: Int64(fallback), in: Int64(range.lowerBound)...Int64(range.upperBound)))
    }

    mutating func double(_ key: String, default fallback: Double, in range: ClosedRange<Double>) -> Double {
        guard let value = raw(key) else { return fallback }
        guard let number = value.numberValue?.doubleValue else {
            issues.append(.init(.error, keyPath(key), "must be a number, found \(value.typeName)"))
            return fallback
        }
        guard range.contains(number) else {
            issues.append(.init(.error, keyPath(key), "must be from \(range.lowerBound) to \(range.upperBound), found \(number)"))
            return fallback
        }
        return number
    }

    mutating func bool(_ key: String, default fallback: Bool) -> Bool {
        guard let value = raw(key) else { return fallback }
        guard let flag = value.boolValue else {
            issues.append(.init(.error, keyPath(key), "must be true or false, found \(value.typeName)"))
            return fallback
        }
        return flag
    }

    /// A nested object reader (absent → empty object).
    mutating func object(_ key: String) -> ConfigurationReader {
        ConfigurationReader(path: keyPath(key), value: raw(key), issues: &issues)
    }

    /// The names of the members, for maps keyed by user-chosen names (`programs`, `kafka`).
    var keys: [String] { members.keys.sorted() }

    /// Folds a nested reader's issues and unknown keys back into this one.
    mutating func absorb(_ nested: ConfigurationReader) {
        issues += nested.issues
        issues += nested.unknownKeyIssues()
    }

    /// One warning-or-error per key that nothing read.
    func unknownKeyIssues() -> [ConfigurationIssue] {
        members.keys.filter { !read.contains($0) }.sorted().map {
            ConfigurationIssue(.error, keyPath($0), "is not a known key (check the spelling; see docs/CONFIGURATION.md)", isUnknownKey: true)
        }
    }
}
