import Observability

/// The outcome of one benchmark scenario: an aligned table for people and a JSON object for tools.
struct BenchmarkReport: Sendable {
    /// One line naming the scenario and its setup.
    var title: String
    /// Column headings.
    var columns: [String]
    /// Table cells, one array per row, as many cells as `columns`.
    var rows: [[String]]
    /// Lines printed under the table: environment, caveats, what went wrong.
    var notes: [String]
    /// The same figures as one JSON object (already encoded).
    var json: String

    /// Creates a report.
    init(title: String, columns: [String], rows: [[String]], notes: [String], json: String) {
        self.title = title
        self.columns = columns
        self.rows = rows
        self.notes = notes
        self.json = json
    }

    /// The title, the table with every column padded to its widest cell, and the notes.
    func renderTable() -> String {
        // Text left-aligned in the first two columns, figures right-aligned.
        let table = TextTable(headers: columns, rows: rows, rightAligned: Set(2..<max(2, columns.count)))
        var lines = [title, "", table.rendered]
        if !notes.isEmpty {
            lines.append("")
            lines += notes
        }
        return lines.joined(separator: "\n")
    }
}
