/// The outcome of one benchmark scenario: an aligned table for people and a JSON object for tools.
public struct BenchmarkReport: Sendable {
    /// One line naming the scenario and its setup.
    public var title: String
    /// Column headings.
    public var columns: [String]
    /// Table cells, one array per row, as many cells as `columns`.
    public var rows: [[String]]
    /// Lines printed under the table: environment, caveats, what went wrong.
    public var notes: [String]
    /// The same figures as one JSON object (already encoded).
    public var json: String

    /// Creates a report.
    public init(title: String, columns: [String], rows: [[String]], notes: [String], json: String) {
        self.title = title
        self.columns = columns
        self.rows = rows
        self.notes = notes
        self.json = json
    }

    /// The title, the table with every column padded to its widest cell, and the notes.
    public func renderTable() -> String {
        var widths = columns.map(\.count)
        for row in rows {
            for (index, cell) in row.enumerated() where index < widths.count {
                widths[index] = max(widths[index], cell.count)
            }
        }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { index, cell in
                let width = index < widths.count ? widths[index] : cell.count
                let padding = String(repeating: " ", count: max(0, width - cell.count))
                // Text left-aligned in the first two columns, figures right-aligned.
                return index < 2 ? cell + padding : padding + cell
            }.joined(separator: "  ")
        }
        var lines = [title, "", line(columns), line(widths.map { String(repeating: "-", count: $0) })]
        lines += rows.map(line)
        if !notes.isEmpty {
            lines.append("")
            lines += notes
        }
        return lines.joined(separator: "\n")
    }
}
