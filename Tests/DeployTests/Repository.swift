import Contract
import Foundation

/// Paths and readers for the files this suite checks: the repository's `Config/`, `Deploy/` and
/// `docs/`, found from this source file's location (so the tests read the working tree, not a copy).
enum Repository {
    /// The repository root (the folder holding Package.swift).
    static let root: URL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The absolute path of `relative` under the root.
    static func path(_ relative: String) -> String { root.appendingPathComponent(relative).path }

    /// The text of `relative`.
    static func text(_ relative: String) throws -> String {
        try String(contentsOfFile: path(relative), encoding: .utf8)
    }

    /// `relative` parsed as strict JSON.
    static func json(_ relative: String) throws -> JSONValue {
        try JSONParser().parse(try text(relative))
    }

    /// The names of the files in folder `relative` ending in `suffix`, sorted.
    static func files(in relative: String, endingWith suffix: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: path(relative)).filter { $0.hasSuffix(suffix) }.sorted()
    }
}
