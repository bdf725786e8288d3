import Foundation
import Pipeline
import Testing
import TestSupport

/// `Deploy/Dockerfile` and `Deploy/systemd/provisioner.service`, read as text and held against the
/// package manifest, the Kubernetes Deployment and the drain bound.
@Suite("Deploy/Dockerfile and Deploy/systemd", .timeLimit(.minutes(5)))
struct ContainerAndServiceTests {
    /// Dockerfile instructions with continuation lines joined and comments dropped.
    private static func instructions() throws -> [String] {
        var lines: [String] = []
        var current = ""
        for raw in try Repository.text("Deploy/Dockerfile").split(separator: "\n", omittingEmptySubsequences: false) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("#") || (line.isEmpty && current.isEmpty) { continue }
            if line.hasSuffix("\\") {
                current += line.dropLast() + " "
            } else {
                lines.append((current + line).trimmingCharacters(in: .whitespaces))
                current = ""
            }
        }
        return lines.filter { !$0.isEmpty }
    }

    /// The apt packages `Package.swift` names for its system libraries (`providers: [.apt([...])]`).
    private static func manifestPackages() throws -> Set<String> {
        let manifest = try Repository.text("Package.swift")
        var packages: Set<String> = []
        var rest = manifest[...]
        while let start = rest.range(of: ".apt([") {
            let tail = rest[start.upperBound...]
            guard let end = tail.firstIndex(of: "]") else { break }
            for quoted in tail[..<end].split(separator: ",") {
                packages.insert(quoted.trimmingCharacters(in: CharacterSet(charactersIn: "\" ")))
            }
            rest = tail[end...]
        }
        return packages
    }

    private static func packagesInstalled(in stage: [String]) -> Set<String> {
        let install = stage.filter { $0.hasPrefix("RUN ") && $0.contains("apt-get install") }
        return Set(install.flatMap { command in
            command.components(separatedBy: "apt-get install").dropFirst().flatMap { part in
                part.components(separatedBy: "&&")[0].split(separator: " ").map(String.init).filter { !$0.hasPrefix("-") && !$0.isEmpty }
            }
        })
    }

    @Test("two stages: a Swift 6 bookworm build stage and a bookworm-slim runtime stage")
    func stages() throws {
        let lines = try Self.instructions()
        let froms = lines.filter { $0.hasPrefix("FROM ") }
        #expect(froms == ["FROM ${SWIFT_IMAGE} AS build", "FROM ${RUNTIME_IMAGE} AS runtime"])
        let swiftImage = try #require(lines.first { $0.hasPrefix("ARG SWIFT_IMAGE=") })
        #expect(swiftImage.hasPrefix("ARG SWIFT_IMAGE=swift:6.") && swiftImage.hasSuffix("-bookworm"), "\(swiftImage)")
        #expect(lines.contains("ARG RUNTIME_IMAGE=debian:bookworm-slim"))
    }

    @Test("the build stage installs the -dev package of every system library in Package.swift and builds release, static stdlib")
    func buildStage() throws {
        let lines = try Self.instructions()
        let runtimeStart = try #require(lines.firstIndex { $0.hasPrefix("FROM ${RUNTIME_IMAGE}") })
        let build = Array(lines[..<runtimeStart])
        let required = try Self.manifestPackages()
        #expect(required == ["librdkafka-dev", "libssl-dev", "libcurl4-openssl-dev", "libmicrohttpd-dev"], "Package.swift changed: update the Dockerfile")
        #expect(required.isSubset(of: Self.packagesInstalled(in: build)))
        #expect(build.contains { $0.hasPrefix("RUN swift build -c release --static-swift-stdlib") })
        for path in ["Package.swift", "Sources", "Tests"] {
            #expect(build.contains { $0.hasPrefix("COPY \(path)") }, "COPY \(path)")
        }
        // The image builds the worker's product alone: the benchmarks (provisioner-bench) stay out.
        #expect(build.contains { $0.contains("--product provisioner ") })
        #expect(!build.contains { $0.contains("provisioner-bench") })
    }

    @Test("the runtime stage: only the runtime libraries and CA bundle, the binary, a numeric non-root user, provisioner worker")
    func runtimeStage() throws {
        let lines = try Self.instructions()
        let runtimeStart = try #require(lines.firstIndex { $0.hasPrefix("FROM ${RUNTIME_IMAGE}") })
        let runtime = Array(lines[runtimeStart...])
        #expect(Self.packagesInstalled(in: runtime) == ["libssl3", "libcurl4", "libmicrohttpd12", "ca-certificates"],
                "librdkafka comes from the build stage (the wheel's 2.16), not Debian's librdkafka1 2.0.2")
        #expect(runtime.contains { $0.hasPrefix("COPY --from=build ") && $0.hasSuffix(" /usr/local/bin/provisioner") })
        #expect(runtime.filter { $0.hasPrefix("COPY --from=build ") && $0.contains(" /usr/local/bin/") }.count == 1,
                "the image ships one binary, provisioner")
        let user = try #require(runtime.last { $0.hasPrefix("USER ") })
        let uid = try #require(Int(user.dropFirst(5).split(separator: ":")[0]), "USER must be numeric for runAsNonRoot")
        #expect(uid != 0)
        let deployment = try YAMLDocuments.resource(kind: "Deployment", named: "provisioner")
        #expect(deployment.at("spec.template.spec.securityContext.runAsUser")?.int64Value == Int64(uid))
        #expect(runtime.contains(#"ENTRYPOINT ["provisioner"]"#))
        #expect(runtime.contains(#"CMD ["worker", "--config", "/etc/provisioner/worker.json"]"#))
        #expect(runtime.contains("EXPOSE \(WorkerConfigs.defaultObservabilityPort)"))
        let ignore = try Repository.text("Deploy/Dockerfile.dockerignore").split(separator: "\n").map(String.init)
        #expect(ignore.contains("*") && ["!Package.swift", "!Sources", "!Tests"].allSatisfy(ignore.contains))
    }

    @Test("the image carries librdkafka 2.10 or later for production: the wheel CI tests on, checked at build time, found through LD_LIBRARY_PATH, licenses beside it")
    func productionLibrdkafka() throws {
        let lines = try Self.instructions()
        let runtimeStart = try #require(lines.firstIndex { $0.hasPrefix("FROM ${RUNTIME_IMAGE}") })
        let (build, runtime) = (Array(lines[..<runtimeStart]), Array(lines[runtimeStart...]))
        let pin = try #require(lines.first { $0.hasPrefix("ARG LIBRDKAFKA_WHEEL=") }, "the librdkafka source is not pinned")
        let version = String(pin.dropFirst("ARG LIBRDKAFKA_WHEEL=confluent-kafka==".count))
        #expect(pin.hasPrefix("ARG LIBRDKAFKA_WHEEL=confluent-kafka=="), "\(pin)")
        let parts = version.split(separator: ".").compactMap { Int($0) }
        #expect(parts.count == 3 && (parts[0], parts[1]) >= (2, 10), "librdkafka \(version) is below 2.10 (confluentinc/librdkafka#4059)")
        // The same wheel the rdkafka216 phase runs the multi-worker suites on (scripts/setup's .venv).
        let venvLib = Repository.path(".venv/lib")
        let pythons = (try? FileManager.default.contentsOfDirectory(atPath: venvLib)) ?? []
        let installed = pythons.flatMap { python in
            ((try? FileManager.default.contentsOfDirectory(atPath: "\(venvLib)/\(python)/site-packages")) ?? [])
                .filter { $0.hasPrefix("confluent_kafka-") && $0.hasSuffix(".dist-info") }
        }
        #expect(installed == ["confluent_kafka-\(version).dist-info"], "the image pins \(version); the tests run on \(installed)")
        // Downloaded and unpacked in the build stage, never installed; the build fails unless the binary loads it.
        #expect(build.contains { $0.hasPrefix("RUN python3 -m pip download --no-deps --only-binary=:all:") && $0.contains("\"${LIBRDKAFKA_WHEEL}\"")
            && $0.contains("confluent_kafka.libs/librdkafka-*.so.1 /out/lib/librdkafka.so.1") && $0.contains("/out/licenses") })
        let minor = "^librdkafka \(parts.prefix(2).map(String.init).joined(separator: "\\."))\\."
        #expect(build.contains { $0.hasPrefix("RUN swift build") && $0.contains("LD_LIBRARY_PATH=/out/lib /out/provisioner version") && $0.contains(minor) },
                "the build does not check that the binary loads librdkafka \(version)")
        // At run time: the file, the search path, the licenses; nothing from Debian's librdkafka1.
        #expect(runtime.contains("COPY --from=build /out/lib/librdkafka.so.1 /usr/local/lib/provisioner/librdkafka.so.1"))
        #expect(runtime.contains("ENV LD_LIBRARY_PATH=/usr/local/lib/provisioner"))
        #expect(runtime.contains { $0.hasPrefix("COPY --from=build /out/licenses ") })
        #expect(!Self.packagesInstalled(in: runtime).contains { $0.hasPrefix("librdkafka") })
        // Deploy/README.md says where it comes from.
        let readme = try Repository.text("Deploy/README.md")
        let release = "librdkafka \(parts.prefix(2).map(String.init).joined(separator: "."))."
        #expect(readme.contains("confluent-kafka==\(version)") && readme.contains(release), "Deploy/README.md does not name the image's librdkafka")
    }

    /// `Key=Value` settings of the unit's `[Service]` section (a key may repeat).
    private static func serviceSettings() throws -> [(key: String, value: String)] {
        var inService = false
        var settings: [(String, String)] = []
        for raw in try Repository.text("Deploy/systemd/provisioner.service").split(separator: "\n") {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("[") { inService = line == "[Service]"; continue }
            guard inService, !line.hasPrefix("#"), let equals = line.firstIndex(of: "=") else { continue }
            settings.append((String(line[..<equals]), String(line[line.index(after: equals)...])))
        }
        return settings
    }

    @Test("systemd: SIGTERM, a stop timeout beyond the drain bound, restart on failure, secrets from files and an EnvironmentFile, hardening")
    func systemdUnit() throws {
        let settings = try Self.serviceSettings()
        func value(_ key: String) -> String? { settings.last { $0.key == key }?.value }
        #expect(value("KillSignal") == "SIGTERM")
        let timeout = try #require(value("TimeoutStopSec").flatMap { Int64($0) })
        let configuration = try WorkerConfigs.load(try Repository.text("Config/worker.json"))
        #expect(timeout * 1000 > configuration.shutdownDrainMs + WorkerConfigs.stopAfterDrainMs,
                "TimeoutStopSec \(timeout) s vs drain \(configuration.shutdownDrainMs) ms")
        #expect(value("Restart") == "on-failure")
        #expect(value("EnvironmentFile")?.isEmpty == false)
        // The secret files worker.json names are where the unit shows the host's secrets directory.
        let directories = Set(configuration.secretFiles.map { ($0.path as NSString).deletingLastPathComponent })
        #expect(directories.count == 1 && value("BindReadOnlyPaths") == "/etc/provisioner/secrets:\(directories.first ?? "?")",
                "\(directories) vs BindReadOnlyPaths=\(value("BindReadOnlyPaths") ?? "")")
        #expect(value("ExecStart")?.hasSuffix("provisioner worker --config /etc/provisioner/worker.json") ?? false)
        #expect(value("ExecStartPre")?.hasSuffix("provisioner config check --config /etc/provisioner/worker.json") ?? false)
        #expect(value("User") == "provisioner")
        for (key, expected) in [("NoNewPrivileges", "yes"), ("ProtectSystem", "strict"), ("ProtectHome", "yes"), ("PrivateTmp", "yes"),
                                ("CapabilityBoundingSet", "")] {
            #expect(value(key) == expected, "\(key)")
        }
        #expect(!settings.contains { $0.key == "Environment" && $0.value.contains("KEY=") }, "no secret values in the unit")
    }

    @Test("systemd-analyze verify accepts the unit")
    func systemdVerify() throws {
        // Not skipped where the tool is missing (that would pass silently): scripts/setup installs it.
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze"),
                     "/usr/bin/systemd-analyze is missing: run scripts/setup (it installs the Debian package systemd)")
        // verify checks that ExecStart's binary and the EnvironmentFile exist: point them at the built
        // binary and an empty file in a scratch copy.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("unit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let environmentFile = directory.appendingPathComponent("secrets.env").path
        try Data().write(to: URL(fileURLWithPath: environmentFile))
        let binary = try BuiltProducts.provisionerPath
        let unit = try Repository.text("Deploy/systemd/provisioner.service")
            .replacingOccurrences(of: "/usr/local/bin/provisioner", with: binary)
            .replacingOccurrences(of: "/etc/provisioner/secrets.env", with: environmentFile)
        let path = directory.appendingPathComponent("provisioner.service").path
        try Data(unit.utf8).write(to: URL(fileURLWithPath: path))
        let run = try CommandRun.run("/usr/bin/systemd-analyze", ["verify", path])
        #expect(run.status == 0 && run.standardError.isEmpty && run.standardOutput.isEmpty, "\(run)")
    }
}
