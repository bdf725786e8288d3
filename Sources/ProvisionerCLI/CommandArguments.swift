/// A parsed command line: `--name value` options, `--flag` switches and positional words.
///
/// Hand-written on purpose (no outside packages). Options may repeat; unknown options are an error
/// the command reports with its usage line.
public struct CommandArguments: Sendable {
    /// Positional words in order (subcommand names already removed).
    public private(set) var positionals: [String]
    private var options: [String: [String]]
    private var switches: Set<String>
    private var consumed: Set<String> = []

    /// Parses `words`; `switchNames` lists the options that take no value (`--json`, `--dry-run`).
    public init(_ words: [String], switchNames: Set<String>) throws(UsageError) {
        var positionals: [String] = []
        var options: [String: [String]] = [:]
        var switches: Set<String> = []
        var index = 0
        while index < words.count {
            let word = words[index]
            if word == "--" {
                positionals.append(contentsOf: words[(index + 1)...])
                break
            }
            if word.hasPrefix("--") && word.count > 2 {
                var name = String(word.dropFirst(2))
                var inlineValue: String?
                if let equals = name.firstIndex(of: "=") {
                    inlineValue = String(name[name.index(after: equals)...])
                    name = String(name[..<equals])
                }
                if switchNames.contains(name) {
                    guard inlineValue == nil else { throw UsageError("--\(name) takes no value") }
                    switches.insert(name)
                } else if let inlineValue {
                    options[name, default: []].append(inlineValue)
                } else {
                    guard index + 1 < words.count else { throw UsageError("--\(name) needs a value") }
                    options[name, default: []].append(words[index + 1])
                    index += 1
                }
            } else if word == "-h" {
                switches.insert("help")
            } else {
                positionals.append(word)
            }
            index += 1
        }
        self.positionals = positionals
        self.options = options
        self.switches = switches
    }

    /// True when `--name` was given as a switch.
    public mutating func flag(_ name: String) -> Bool {
        consumed.insert(name)
        return switches.contains(name)
    }

    /// The last value given for `--name`, if any.
    public mutating func option(_ name: String) -> String? {
        consumed.insert(name)
        return options[name]?.last
    }

    /// The value of `--name`, or a usage error saying it is required.
    public mutating func requiredOption(_ name: String) throws(UsageError) -> String {
        guard let value = option(name) else { throw UsageError("--\(name) is required") }
        return value
    }

    /// `--name` parsed as an integer within `range`, or `defaultValue` when absent.
    public mutating func integer(_ name: String, default defaultValue: Int, in range: ClosedRange<Int>) throws(UsageError) -> Int {
        guard let text = option(name) else { return defaultValue }
        guard let value = Int(text), range.contains(value) else {
            throw UsageError("--\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound), got '\(text)'")
        }
        return value
    }

    /// `--name` parsed as a number within `range`, or `defaultValue` when absent.
    public mutating func number(_ name: String, default defaultValue: Double, in range: ClosedRange<Double>) throws(UsageError) -> Double {
        guard let text = option(name) else { return defaultValue }
        guard let value = Double(text), range.contains(value) else {
            throw UsageError("--\(name) must be a number from \(range.lowerBound) to \(range.upperBound), got '\(text)'")
        }
        return value
    }

    /// Removes and returns the first positional word.
    public mutating func popPositional() -> String? {
        positionals.isEmpty ? nil : positionals.removeFirst()
    }

    /// Throws when an option or switch was given that the command never asked for.
    public func rejectUnknown() throws(UsageError) {
        let given = Set(options.keys).union(switches)
        if let unknown = given.subtracting(consumed).subtracting(["help"]).sorted().first {
            throw UsageError("unknown option --\(unknown)")
        }
    }
}

/// A bad command line: printed as one line with the command's usage, exit status 2.
public struct UsageError: Error, Sendable, CustomStringConvertible {
    /// What was wrong, in one line.
    public var message: String
    /// Creates a usage error.
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
