/// HTML text helpers: every value that reaches a page goes through `escape`.
enum HTML {
    /// `text` with `& < > " '` as character references.
    static func escape(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&#39;"
            default: result.append(character)
            }
        }
        return result
    }

    /// `text` percent-encoded for a query value.
    static func query(_ text: String) -> String {
        var result = ""
        for byte in text.utf8 {
            let c = Character(Unicode.Scalar(byte))
            if c.isASCII && (c.isLetter || c.isNumber || "-._~:".contains(c)) { result.append(c) } else { result += "%" + hex(byte) }
        }
        return result
    }

    static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
    }

    /// A table with escaped cells.
    static func table(_ headers: [String], _ rows: [[String]], id: String? = nil, cellIDs: [[String?]]? = nil) -> String {
        var html = "<table\(id.map { " id=\"\(escape($0))\"" } ?? "")><thead><tr>"
        html += headers.map { "<th>\(escape($0))</th>" }.joined()
        html += "</tr></thead><tbody>"
        for (r, row) in rows.enumerated() {
            html += "<tr>"
            for (c, cell) in row.enumerated() {
                let cellID = cellIDs?[r][c].map { " id=\"\(escape($0))\"" } ?? ""
                html += "<td\(cellID)>\(escape(cell))</td>"
            }
            html += "</tr>"
        }
        if rows.isEmpty { html += "<tr><td colspan=\"\(headers.count)\" class=\"empty\">none</td></tr>" }
        return html + "</tbody></table>"
    }

    /// A hidden form field.
    static func hidden(_ name: String, _ value: String) -> String {
        "<input type=\"hidden\" name=\"\(escape(name))\" value=\"\(escape(value))\">"
    }
}
