import Foundation
import Testing

/// The Python test peers live in the repository's `.venv` (made by `scripts/setup`), never in the
/// system's site-packages, and every script that runs Python tools puts `.venv/bin` first on PATH.
@Suite("Python test peers: the .venv scripts/setup makes, and the scripts that use it", .timeLimit(.minutes(2)))
struct PythonVenvTests {
    /// The line each script runs after `scripts/setup` (or its `cd`), before any Python tool.
    static let pathLine = #"export PATH="$PWD/.venv/bin:$PATH""#

    @Test("scripts/setup made .venv at the top: a venv (not the system python), gitignored, with every peer importable")
    func venvHasThePeers() throws {
        let python = Repository.path(".venv/bin/python3")
        #expect(FileManager.default.isExecutableFile(atPath: python), "no \(python): run scripts/setup")
        let run = try CommandRun.run(python, ["-c", """
            import sys
            import confluent_kafka, jwcrypto, yaml, jsonschema, selenium, opentelemetry.proto
            print(sys.prefix != sys.base_prefix, sys.prefix)
            """])
        #expect(run.status == 0, "\(run)")
        #expect(run.standardOutput.hasPrefix("True \(Repository.root.appendingPathComponent(".venv").path)"), "\(run)")
        let ignored = try CommandRun.run("/usr/bin/env", ["git", "-C", Repository.root.path, "check-ignore", "-q", ".venv/bin/python3"])
        #expect(ignored.status == 0, ".venv is not gitignored: \(ignored)")
    }

    @Test("scripts/setup installs with the venv's pip only: no system pip, no --break-system-packages")
    func setupUsesTheVenvPip() throws {
        let setup = try Repository.text("scripts/setup")
        #expect(!setup.contains("--break-system-packages"))
        #expect(setup.contains("python3-venv"))
        let pipLines = setup.split(separator: "\n").filter { $0.contains("pip install") }
        #expect(!pipLines.isEmpty)
        for line in pipLines { #expect(line.contains("\"$venv/bin/python3\" -m pip install"), "\(line)") }
    }

    @Test("scripts that run Python tools (the tests, the demo, screenshots, callgrind) put .venv/bin first on PATH before running them")
    func scriptsPutTheVenvFirst() throws {
        let users = try FileManager.default.contentsOfDirectory(atPath: Repository.path("scripts")).sorted().filter { name in
            guard name != "setup", let text = try? Repository.text("scripts/\(name)") else { return false }
            return text.contains("scripts/setup") || text.contains("python3") || text.contains("swift test")
        }
        #expect(Set(["test", "demo", "screenshots", "callgrind"]).isSubset(of: Set(users)), "\(users)")
        for name in users {
            // Commands only: comment lines may name anything.
            let lines = try Repository.text("scripts/\(name)").split(separator: "\n").map(String.init)
                .filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("#") }
            let line = try #require(lines.firstIndex { $0.hasPrefix(Self.pathLine) }, "scripts/\(name) does not put .venv/bin first on PATH")
            for use in ["swift test", "python3 ", "exec .build", "\"$binary\""] {
                if let first = lines.firstIndex(where: { $0.contains(use) }) {
                    #expect(line < first, "scripts/\(name) runs `\(use)` before setting PATH")
                }
            }
            if let setup = lines.firstIndex(of: "scripts/setup") {
                #expect(setup < line, "scripts/\(name) sets PATH before scripts/setup made the venv")
            }
        }
    }
}
