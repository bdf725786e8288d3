import Contract

/// What `provisioner dlq list` printed, read back: the table's columns by position, and the
/// `--json` form's entries.
struct DLQListing: Sendable {
    /// One row of the table, by heading.
    typealias Row = [String: String]

    /// Rows of the table.
    var rows: [Row]
    /// Problems with the layout (cells not starting at their column).
    var misaligned: [String]
    /// The closing line (`N dead letter(s) in TOPIC`).
    var footer: String?

    /// Reads the aligned table: a heading line, a rule of dashes, the rows, a footer.
    init(table lines: [String]) {
        rows = []
        misaligned = []
        footer = lines.last { $0.contains("dead letter(s) in") }
        guard lines.count >= 2, let ruleIndex = lines.firstIndex(where: { $0.hasPrefix("-") }), ruleIndex > 0 else {
            misaligned.append("no heading and rule lines in: \(lines)")
            return
        }
        let heading = Array(lines[ruleIndex - 1])
        let rule = Array(lines[ruleIndex])
        // Columns start where a run of dashes starts.
        var starts: [Int] = []
        for index in rule.indices where rule[index] == "-" && (index == 0 || rule[index - 1] == " ") { starts.append(index) }
        func cells(_ line: [Character]) -> [String] {
            starts.enumerated().map { column, start in
                let end = column + 1 < starts.count ? starts[column + 1] : line.count
                guard start < line.count else { return "" }
                return String(line[start..<min(end, line.count)]).trimmedOfSpaces()
            }
        }
        let names = cells(heading)
        for line in lines[(ruleIndex + 1)...] where !line.isEmpty && !line.contains("dead letter(s) in") {
            let characters = Array(line)
            for (column, start) in starts.enumerated() {
                let startsHere = start < characters.count && characters[start] != " "
                let separated = start == 0 || (start >= 2 && characters[start - 1] == " " && characters[start - 2] == " ")
                if !startsHere || !separated { misaligned.append("column \(names[column]) of '\(line)'") }
            }
            rows.append(Dictionary(uniqueKeysWithValues: zip(names, cells(characters))))
        }
    }

    /// The `id` of each entry of `dlq list --json` output.
    static func ids(json lines: [String]) throws -> [String] {
        try entries(json: lines).compactMap { $0["id"]?.stringValue }
    }

    /// The entries of `dlq list --json` output.
    static func entries(json lines: [String]) throws -> [JSONValue] {
        let document = try JSONParser().parse(lines.joined(separator: "\n"))
        return document.arrayValue ?? []
    }
}

extension String {
    /// Without leading and trailing spaces.
    func trimmedOfSpaces() -> String {
        var text = Substring(self)
        while text.first == " " { text.removeFirst() }
        while text.last == " " { text.removeLast() }
        return String(text)
    }
}
