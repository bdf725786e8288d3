import Foundation
import Observability

/// The exposition reader moved to Observability (the console reads values with it too).
typealias Exposition = PrometheusExposition

/// Just enough of PromQL to list the metric, label and function names an expression uses: a lexer
/// that classifies each identifier by what surrounds it (inside `{…}` a label, after `by`/`on`/… a
/// label list, before `(` a function, otherwise a metric). Grafana's variables are substituted
/// first. Strings and `[…]` ranges are skipped.
enum PromQLNames {
    struct Names: Equatable {
        var metrics: Set<String> = []
        var labels: Set<String> = []
        var functions: Set<String> = []
        var problems: [String] = []
    }

    static let aggregations: Set<String> = [
        "sum", "min", "max", "avg", "count", "stddev", "stdvar", "topk", "bottomk", "quantile", "count_values", "group",
    ]
    static let functions: Set<String> = [
        "rate", "irate", "increase", "delta", "idelta", "deriv", "histogram_quantile", "abs", "ceil", "floor", "round",
        "clamp", "clamp_min", "clamp_max", "sum_over_time", "avg_over_time", "max_over_time", "min_over_time",
        "count_over_time", "last_over_time", "quantile_over_time", "changes", "resets", "time", "timestamp", "vector",
        "scalar", "absent", "absent_over_time", "label_replace", "label_join", "sort", "sort_desc", "predict_linear",
        "exp", "ln", "log2", "log10", "sqrt",
    ]
    private static let grouping: Set<String> = ["by", "without", "on", "ignoring", "group_left", "group_right"]
    private static let keywords: Set<String> = ["bool", "and", "or", "unless", "offset", "inf", "nan", "atan2"]

    /// `expr` with Grafana's interval variables as `5m` and any other `$var` / `${var}` as `.*`.
    static func substitutingVariables(_ expr: String) -> String {
        var text = expr
        for interval in ["$__rate_interval", "${__rate_interval}", "$__interval", "${__interval}", "$__range", "${__range}"] {
            text = text.replacingOccurrences(of: interval, with: "5m")
        }
        let variable = try! NSRegularExpression(pattern: #"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?"#)
        return variable.stringByReplacingMatches(in: text, range: NSRange(text.startIndex..., in: text), withTemplate: ".*")
    }

    /// The names `expr` uses.
    static func names(in expr: String) -> Names {
        let characters = Array(substitutingVariables(expr))
        var names = Names()
        var index = 0
        var braces = 0
        func isStart(_ c: Character) -> Bool { c.isASCII && (c.isLetter || c == "_" || c == ":") }
        func isPart(_ c: Character) -> Bool { c.isASCII && (c.isLetter || c.isNumber || c == "_" || c == ":") }
        func skipSpaces() { while index < characters.count, characters[index].isWhitespace { index += 1 } }
        func identifier() -> String {
            let start = index
            while index < characters.count, isPart(characters[index]) { index += 1 }
            return String(characters[start..<index])
        }
        while index < characters.count {
            let c = characters[index]
            if c == "\"" || c == "'" || c == "`" {
                index += 1
                while index < characters.count, characters[index] != c {
                    if characters[index] == "\\" && c != "`" { index += 1 }
                    index += 1
                }
                index += 1
            } else if c == "[" {
                while index < characters.count, characters[index] != "]" { index += 1 }
                index += 1
            } else if c == "{" {
                braces += 1
                index += 1
            } else if c == "}" {
                braces -= 1
                index += 1
            } else if c.isNumber || (c == "." && index + 1 < characters.count && characters[index + 1].isNumber) {
                while index < characters.count, isPart(characters[index]) || characters[index] == "." { index += 1 }
            } else if isStart(c) {
                let word = identifier()
                if braces > 0 {
                    names.labels.insert(word)
                    if word == "__name__" { names.problems.append("\(expr): name the metric, not __name__") }
                    continue
                }
                let lower = word.lowercased()
                skipSpaces()
                let next = index < characters.count ? characters[index] : " "
                if grouping.contains(lower) {
                    guard next == "(" else { continue }
                    index += 1
                    while index < characters.count, characters[index] != ")" {
                        if isStart(characters[index]) { names.labels.insert(identifier()) } else { index += 1 }
                    }
                    index += 1
                } else if keywords.contains(lower) {
                    continue
                } else if aggregations.contains(lower) || next == "(" {
                    names.functions.insert(word)
                    if !aggregations.contains(word) && !functions.contains(word) {
                        names.problems.append("\(expr): '\(word)' is not a PromQL function or aggregation")
                    }
                } else {
                    names.metrics.insert(word)
                }
            } else {
                index += 1
            }
        }
        if braces != 0 { names.problems.append("\(expr): unbalanced braces") }
        return names
    }

    /// Label names a legend format interpolates (`{{program}} {{wallet}}`).
    static func legendLabels(_ format: String) -> Set<String> {
        let pattern = try! NSRegularExpression(pattern: #"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}"#)
        return Set(pattern.matches(in: format, range: NSRange(format.startIndex..., in: format)).compactMap { match in
            Range(match.range(at: 1), in: format).map { String(format[$0]) }
        })
    }
}
