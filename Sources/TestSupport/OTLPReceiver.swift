import Contract
import Foundation

/// A real OTLP/HTTP trace receiver as a child process: `Tests/Interop/otlp_receiver.py`, which
/// parses every export with the `opentelemetry-proto` package (installed into `.venv` by
/// `scripts/setup`) and writes what it received to a folder: every body as sent (`rawBytes`),
/// every span it parsed (`spans`), every body it refused (`errors`).
public final class OTLPReceiver: Sendable {
    /// One span as the receiver parsed it.
    public struct ReceivedSpan: Sendable {
        /// Trace, span and parent span ids in hex (the parent empty for a root).
        public var traceID: String
        /// The span's id.
        public var spanID: String
        /// Its parent's id, or empty.
        public var parentSpanID: String
        /// The span's name.
        public var name: String
        /// OTLP's span kind number.
        public var kind: Int
        /// String attributes by key.
        public var attributes: [String: String]
    }

    private let process: ChildProcess
    private let folder: String
    /// The collector's base URL (`tracing.otlp_endpoint`).
    public let endpoint: String

    /// Starts the receiver on a free loopback port; throws when the venv's Python or the package is missing.
    public init() async throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent(UniqueName.make("otlp")).path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let script = Self.repository.appendingPathComponent("Tests/Interop/otlp_receiver.py").path
        process = try ChildProcess(executable: Self.python, arguments: [script, folder])
        let line = try await process.waitForLine(prefix: "otlp receiver listening on ", timeout: .seconds(30))
        endpoint = "http://127.0.0.1:" + line.dropFirst("otlp receiver listening on ".count)
    }

    /// Every span received so far, in order of arrival.
    public var spans: [ReceivedSpan] {
        let text = (try? String(contentsOfFile: folder + "/spans.jsonl", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            guard let document = try? JSONParser().parse(String(line)) else { return nil }
            var attributes: [String: String] = [:]
            for (key, value) in document["attributes"]?.objectValue ?? [:] { attributes[key] = value.stringValue }
            return ReceivedSpan(traceID: document["trace_id"]?.stringValue ?? "", spanID: document["span_id"]?.stringValue ?? "",
                                parentSpanID: document["parent_span_id"]?.stringValue ?? "", name: document["name"]?.stringValue ?? "",
                                kind: Int(document["kind"]?.int64Value ?? 0), attributes: attributes)
        }
    }

    /// The export bodies exactly as received, one after another.
    public var rawBytes: [UInt8] {
        (try? [UInt8](Data(contentsOf: URL(fileURLWithPath: folder + "/raw.bin")))) ?? []
    }

    /// Why bodies were refused (a body that did not parse as OTLP), one line each.
    public var errors: [String] {
        ((try? String(contentsOfFile: folder + "/errors.jsonl", encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// Stops the receiver and removes its folder.
    public func stop() {
        process.kill()
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// The repository's top folder (from this file's place in it).
    private static var repository: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    /// The venv's Python (`scripts/setup`), else `python3` on PATH.
    private static var python: String {
        let venv = repository.appendingPathComponent(".venv/bin/python3").path
        return FileManager.default.isExecutableFile(atPath: venv) ? venv : "python3"
    }
}
