/// Minimal JSON text helpers for log lines and metric label values.
enum JSONText {
    /// Appends `text` as a JSON string literal (quotes included) to `output`.
    static func appendQuoted(_ text: String, to output: inout String) {
        output.append("\"")
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": output.append("\\\"")
            case "\\": output.append("\\\\")
            case "\n": output.append("\\n")
            case "\r": output.append("\\r")
            case "\t": output.append("\\t")
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                output.append("\\u" + String(repeating: "0", count: 4 - hex.count) + hex)
            default: output.unicodeScalars.append(scalar)
            }
        }
        output.append("\"")
    }
}
