import Foundation
import Testing
import TestSupport

/// `docs/asyncapi.yaml` and `docs/schemas/*.schema.json` are well-formed, checked by an
/// independent tool (Python `jsonschema` and PyYAML, through `Tests/Interop/schema_check.py`).
@Suite("Schemas: the AsyncAPI document and the JSON Schemas are well-formed", .timeLimit(.minutes(5)))
struct SchemaDocumentTests {
    @Test("every schema is valid draft-07; the AsyncAPI document is 3.0.x and every $ref resolves")
    func documentsAreWellFormed() throws {
        #expect(try SchemaChecker.lint() == "ok")
    }

    @Test("the check fails on a broken reference, a wrong AsyncAPI version and an invalid schema")
    func checkCatchesBreakage() throws {
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("docs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: copy, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: copy) }
        let docs = SchemaChecker.docsDirectory
        try FileManager.default.copyItem(at: docs.appendingPathComponent("schemas"), to: copy.appendingPathComponent("schemas"))
        var asyncapi = try String(contentsOf: docs.appendingPathComponent("asyncapi.yaml"), encoding: .utf8)
        asyncapi = asyncapi.replacingOccurrences(of: "asyncapi: 3.0.0", with: "asyncapi: 2.6.0")
            .replacingOccurrences(of: "'#/channels/replies/messages/result'", with: "'#/channels/replies/messages/answer'")
            .replacingOccurrences(of: "./schemas/audit-event.schema.json", with: "./schemas/audit.schema.json")
        try asyncapi.write(to: copy.appendingPathComponent("asyncapi.yaml"), atomically: true, encoding: .utf8)
        let result = copy.appendingPathComponent("schemas/result.schema.json")
        let text = try String(contentsOf: result, encoding: .utf8).replacingOccurrences(of: "\"minimum\": 1\n", with: "\"minimum\": \"one\"\n")
        try text.write(to: result, atomically: true, encoding: .utf8)
        let report = try SchemaChecker.lint(docs: copy)
        #expect(report.contains("not 3.0.x"), "\(report)")
        #expect(report.contains("$ref #/channels/replies/messages/answer does not resolve"), "\(report)")
        #expect(report.contains("audit.schema.json does not resolve"), "\(report)")
        #expect(report.contains("result.schema.json: not a valid draft-07 schema"), "\(report)")
    }
}
