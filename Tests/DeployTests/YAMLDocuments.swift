import Contract
import Foundation

/// Reads YAML through Python's PyYAML (`yaml.safe_load_all`), an independent parser: Python dumps
/// the documents of every file to JSON, parsed here. The Kubernetes manifests are read once per
/// test run (one Python process) and shared.
enum YAMLDocuments {
    /// Every `.yaml` file in `Deploy/kubernetes`, parsed: file name and its documents (empty ones
    /// dropped), or why they could not be read.
    private static let manifests: Result<[String: [JSONValue]], CommandRun.Failure> = readManifests()

    private static func readManifests() -> Result<[String: [JSONValue]], CommandRun.Failure> {
        do {
            let files = try Repository.files(in: "Deploy/kubernetes", endingWith: ".yaml")
            let parsed = try parse(files.map { "Deploy/kubernetes/\($0)" })
            return .success(Dictionary(uniqueKeysWithValues: files.map { ($0, parsed["Deploy/kubernetes/\($0)"] ?? []) }))
        } catch let failure as CommandRun.Failure {
            return .failure(failure)
        } catch {
            return .failure(CommandRun.Failure(description: "reading Deploy/kubernetes failed: \(error)"))
        }
    }

    /// Parses the YAML files at `relatives` (paths under the repository root) in one Python run.
    static func parse(_ relatives: [String]) throws -> [String: [JSONValue]] {
        let script = """
            import json, sys
            try:
                import yaml
            except ImportError:
                sys.exit("PyYAML is missing: apt-get install python3-yaml (or pip install pyyaml)")
            result = {}
            for name, path in zip(sys.argv[1::2], sys.argv[2::2]):
                try:
                    with open(path, encoding="utf-8") as handle:
                        result[name] = [document for document in yaml.safe_load_all(handle) if document is not None]
                except yaml.YAMLError as error:
                    sys.exit(f"{name} is not valid YAML: {error}")
            print(json.dumps(result))
            """
        let arguments = relatives.flatMap { [$0, Repository.path($0)] }
        let run = try CommandRun.run("/usr/bin/env", ["python3", "-c", script] + arguments)
        guard run.status == 0 else {
            throw CommandRun.Failure(description: "python3 could not read the YAML: \(run.standardError)")
        }
        guard let object = try JSONParser(maxDepth: 128, maxBytes: 16 << 20).parse(run.standardOutput).objectValue else {
            throw CommandRun.Failure(description: "python3 printed no JSON object")
        }
        return object.mapValues { $0.arrayValue ?? [] }
    }

    /// The documents of `relative`, a file in `Deploy/kubernetes`.
    static func load(_ relative: String) throws -> [JSONValue] {
        let name = (relative as NSString).lastPathComponent
        guard let documents = try manifests.get()[name] else {
            throw CommandRun.Failure(description: "\(relative) is not a .yaml file in Deploy/kubernetes")
        }
        return documents
    }

    /// Every document of every `.yaml` file in `Deploy/kubernetes`, with its file name.
    static func kubernetes() throws -> [(file: String, document: JSONValue)] {
        try manifests.get().sorted { $0.key < $1.key }.flatMap { file, documents in documents.map { (file, $0) } }
    }

    /// The one resource of `kind` named `name` (any name when nil) in `Deploy/kubernetes`.
    static func resource(kind: String, named name: String? = nil) throws -> JSONValue {
        let matches = try kubernetes().map(\.document).filter {
            $0["kind"]?.stringValue == kind && (name == nil || $0.at("metadata.name")?.stringValue == name)
        }
        guard matches.count == 1, let match = matches.first else {
            throw CommandRun.Failure(description: "expected one \(kind)\(name.map { " named \($0)" } ?? "") in Deploy/kubernetes, found \(matches.count)")
        }
        return match
    }
}
