/// A `/metrics` body (Prometheus text format 0.0.4) read into families and samples: names, types,
/// labels and values (the console's figures; DeployTests' naming checks).
public struct PrometheusExposition: Sendable {
    /// One sample line: `name{label="value",…} value`.
    public struct Sample: Sendable {
        /// The series name (`x_bucket` for a histogram bucket).
        public var name: String
        /// Label name → value.
        public var labels: [String: String]
        /// The value as written.
        public var value: String
        /// The value as a number (`+Inf`, `-Inf`, `NaN` included); nil when unreadable.
        public var number: Double? {
            switch value.split(separator: " ").first.map(String.init) ?? "" {
            case "+Inf": .infinity
            case "-Inf": -.infinity
            case let text: Double(text)
            }
        }
    }

    /// Family name → `counter` / `gauge` / `histogram` / … from its `# TYPE` line.
    public private(set) var types: [String: String] = [:]
    /// Family name → its `# HELP` text.
    public private(set) var help: [String: String] = [:]
    /// Every sample line, in order.
    public private(set) var samples: [Sample] = []
    /// Lines that could not be read.
    public private(set) var problems: [String] = []

    /// Reads `text`.
    public init(_ text: String) {
        for line in text.split(separator: "\n").map(String.init) where !line.isEmpty {
            if line.hasPrefix("# TYPE ") || line.hasPrefix("# HELP ") {
                let rest = line.dropFirst(7)
                let name = String(rest.prefix { $0 != " " })
                let tail = String(rest.dropFirst(name.count + 1))
                if line.hasPrefix("# TYPE ") { types[name] = tail } else { help[name] = tail }
            } else if line.hasPrefix("#") {
                continue
            } else if let sample = Self.sample(line) {
                samples.append(sample)
            } else {
                problems.append("unreadable line: \(line)")
            }
        }
    }

    /// The family a sample name belongs to (`x_bucket` → `x` for a histogram `x`).
    public func family(of sampleName: String) -> String? {
        if types[sampleName] != nil { return sampleName }
        for suffix in ["_bucket", "_sum", "_count"] where sampleName.hasSuffix(suffix) {
            let base = String(sampleName.dropLast(suffix.count))
            if let kind = types[base], kind == "histogram" || kind == "summary" { return base }
        }
        return nil
    }

    /// Every sample name (series names as PromQL sees them: `x_bucket`, `x_sum`, `x_count`).
    public var sampleNames: Set<String> { Set(samples.map(\.name)) }

    /// Label names on any sample named `name`.
    public func labelNames(of name: String) -> Set<String> {
        Set(samples.filter { $0.name == name }.flatMap(\.labels.keys))
    }

    private static func sample(_ line: String) -> Sample? {
        let characters = Array(line)
        var index = 0
        func isNameCharacter(_ c: Character) -> Bool { c.isASCII && (c.isLetter || c.isNumber || c == "_" || c == ":") }
        while index < characters.count, isNameCharacter(characters[index]) { index += 1 }
        let name = String(characters[0..<index])
        guard !name.isEmpty else { return nil }
        var labels: [String: String] = [:]
        if index < characters.count, characters[index] == "{" {
            index += 1
            while index < characters.count, characters[index] != "}" {
                let start = index
                while index < characters.count, isNameCharacter(characters[index]) { index += 1 }
                let label = String(characters[start..<index])
                guard !label.isEmpty, index + 1 < characters.count, characters[index] == "=", characters[index + 1] == "\"" else { return nil }
                index += 2
                var value = ""
                while index < characters.count, characters[index] != "\"" {
                    if characters[index] == "\\", index + 1 < characters.count {
                        index += 1
                        value.append(characters[index] == "n" ? "\n" : characters[index])
                    } else {
                        value.append(characters[index])
                    }
                    index += 1
                }
                guard index < characters.count else { return nil }
                index += 1
                labels[label] = value
                if index < characters.count, characters[index] == "," { index += 1 }
            }
            guard index < characters.count else { return nil }
            index += 1
        }
        guard index < characters.count, characters[index] == " " else { return nil }
        let value = String(characters[(index + 1)...])
        guard !value.isEmpty else { return nil }
        return Sample(name: name, labels: labels, value: value)
    }
}


extension PrometheusExposition {
    /// The sum of every sample named `name` whose labels include `matching`.
    public func sum(_ name: String, matching: [String: String] = [:]) -> Double {
        samples.filter { sample in sample.name == name && matching.allSatisfy { key, value in sample.labels[key] == value } }
            .compactMap(\.number).filter(\.isFinite).reduce(0, +)
    }
}
