/// A table for terminals: every column padded to its widest cell, a rule under the headings.
public struct TextTable: Sendable {
    /// Column headings.
    public var headers: [String]
    /// Cells, one array per row.
    public var rows: [[String]]
    /// Columns whose cells are right-aligned (figures).
    public var rightAligned: Set<Int>

    /// Creates a table.
    public init(headers: [String], rows: [[String]], rightAligned: Set<Int> = []) {
        self.headers = headers
        self.rows = rows
        self.rightAligned = rightAligned
    }

    /// The rendered lines joined by newlines.
    public var rendered: String {
        var widths = headers.map(\.count)
        for row in rows {
            for (index, cell) in row.enumerated() where index < widths.count {
                widths[index] = max(widths[index], cell.count)
            }
        }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { index, cell in
                let width = index < widths.count ? widths[index] : cell.count
                let padding = String(repeating: " ", count: max(0, width - cell.count))
                return rightAligned.contains(index) ? padding + cell : cell + padding
            }.joined(separator: "  ").trimmingTrailingSpaces()
        }
        return ([line(headers), line(widths.map { String(repeating: "-", count: $0) })] + rows.map(line)).joined(separator: "\n")
    }
}

extension String {
    func trimmingTrailingSpaces() -> String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}
