import Contract
import Foundation

/// Runs `Tests/Interop/schema_check.py` (Python `jsonschema`, an independent draft-07 validator)
/// against `docs/asyncapi.yaml` and `docs/schemas`.
public enum SchemaChecker {
    /// One document to validate: `bytes` are parsed by Python itself (so its JSON reader judges them).
    public struct Item: Sendable {
        /// Names the item in the verdicts.
        public var id: String
        /// A file name under `docs/schemas` (`result.schema.json`).
        public var schema: String
        /// The document's bytes.
        public var bytes: [UInt8]

        /// Creates an item.
        public init(id: String, schema: String, bytes: [UInt8]) {
            self.id = id
            self.schema = schema
            self.bytes = bytes
        }
    }

    /// Python's judgement of one item.
    public struct Verdict: Sendable {
        /// Whether Python could decode the bytes as UTF-8 JSON.
        public var parsed: Bool
        /// Whether the document validates against the schema.
        public var isValid: Bool
        /// The first few validation errors (`/path: message`).
        public var errors: [String]
        /// Member paths the schema does not declare.
        public var undeclared: [String]
    }

    /// The repository's `docs` directory.
    public static let docsDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("docs")

    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Tests/Interop/schema_check.py").path

    /// Lints the schemas and the AsyncAPI document under `docs`: "ok", or one problem per line.
    public static func lint(docs: URL = docsDirectory) throws -> String {
        try run(["lint", docs.path], input: []).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Validates `items`; the verdicts by item id.
    public static func validate(_ items: [Item], docs: URL = docsDirectory) throws -> [String: Verdict] {
        var input: [UInt8] = []
        for item in items {
            input += JSONWriter.encode(.object([
                "id": .string(item.id), "schema": .string(item.schema), "raw": .string(Crypto.base64Encode(item.bytes)),
            ]))
            input.append(UInt8(ascii: "\n"))
        }
        let output = try run(["validate", docs.path], input: input)
        var verdicts: [String: Verdict] = [:]
        for line in output.split(separator: "\n") {
            let value = try JSONParser().parse(Array(line.utf8))
            guard let id = value["id"]?.stringValue else { continue }
            func strings(_ key: String) -> [String] { value[key]?.arrayValue?.compactMap(\.stringValue) ?? [] }
            verdicts[id] = Verdict(parsed: value["parsed"]?.boolValue ?? false, isValid: value["valid"]?.boolValue ?? false,
                                   errors: strings("errors"), undeclared: strings("undeclared"))
        }
        guard verdicts.count == Set(items.map(\.id)).count else {
            throw TestSupportError("schema_check.py answered \(verdicts.count) of \(items.count) items")
        }
        return verdicts
    }

    /// Runs the script with its input and output in files (no pipe can fill up and stall either side).
    private static func run(_ arguments: [String], input: [UInt8]) throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("schema-check-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let inputURL = directory.appendingPathComponent("in"), outputURL = directory.appendingPathComponent("out")
        let errorURL = directory.appendingPathComponent("err")
        try Data(input).write(to: inputURL)
        _ = FileManager.default.createFile(atPath: outputURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errorURL.path, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script] + arguments
        process.standardInput = try FileHandle(forReadingFrom: inputURL)
        process.standardOutput = try FileHandle(forWritingTo: outputURL)
        process.standardError = try FileHandle(forWritingTo: errorURL)
        try process.run()
        process.waitUntilExit()
        let output = String(decoding: try Data(contentsOf: outputURL), as: UTF8.self)
        guard process.terminationStatus == 0 || arguments.first == "lint" && !output.isEmpty else {
            let errors = String(decoding: try Data(contentsOf: errorURL), as: UTF8.self)
            throw TestSupportError("schema_check.py \(arguments.first ?? "") exited \(process.terminationStatus): \(errors.suffix(2_000))")
        }
        return output
    }
}
