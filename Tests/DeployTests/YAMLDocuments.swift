import Contract
import Foundation

/// Reads YAML through Python's PyYAML (`yaml.safe_load_all`), an independent parser: each document
/// is dumped to JSON by Python and parsed here.
enum YAMLDocuments {
    /// The documents of `relative` (a YAML file under the repository root), empty ones dropped.
    static func load(_ relative: String) throws -> [JSONValue] {
        let script = """
            import json, sys
            try:
                import yaml
            except ImportError:
                sys.exit("PyYAML is missing: apt-get install python3-yaml (or pip install pyyaml)")
            with open(sys.argv[1], encoding="utf-8") as handle:
                documents = [document for document in yaml.safe_load_all(handle) if document is not None]
            print(json.dumps(documents))
            """
        let run = try CommandRun.run("/usr/bin/env", ["python3", "-c", script, Repository.path(relative)])
        guard run.status == 0 else {
            throw CommandRun.Failure(description: "\(relative) is not valid YAML (or python3 failed): \(run.standardError)")
        }
        guard let documents = try JSONParser(maxDepth: 128, maxBytes: 16 << 20).parse(run.standardOutput).arrayValue else {
            throw CommandRun.Failure(description: "python3 printed no JSON array for \(relative)")
        }
        return documents
    }

    /// Every document of every `.yaml` file in `Deploy/kubernetes`, with its file name.
    static func kubernetes() throws -> [(file: String, document: JSONValue)] {
        try Repository.files(in: "Deploy/kubernetes", endingWith: ".yaml").flatMap { file in
            try load("Deploy/kubernetes/\(file)").map { (file, $0) }
        }
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
