// swift-tools-version:6.0
import PackageDescription

/// Provisioner: a Kafka worker pipeline that adds payment cards to Apple Pay and Google Wallet.
///
/// Dependency directions (no cycles, no outside Swift packages):
///   provisioner -> ProvisionerCLI -> { Console, Pipeline };  Console -> { Recovery, HTTP, Kafka, Observability } (not the worker)
///   provisioner-bench -> ProvisionerBench -> { ProvisionerCLI, Harness, ProvisionerClient, Pipeline } (benchmarks, not shipped)
///   ProvisionerCLI -> Pipeline -> { Kafka, Issuers, Recovery, Observability, Contract }
///   Harness -> { Pipeline, Simulator } (embedded stack, load, child processes, demo; the CLI, the benchmarks and TestSupport use it)
///   CoreSimulation -> { Pipeline, Simulator } (the real core on simulated ports; ProvisionerCLI and SimulationTests use it)
///   Recovery -> { Contract, Kafka };  Issuers -> { HTTP, Contract, Observability };  Simulator -> { HTTP, Contract };  Contract -> COpenSSL
///   ProvisionerClient -> { Kafka, Contract } (for Swift backends; the CLI and the benchmarks build on it)
///   ContractFuzz -> { Contract, Recovery, Kafka } (the decoders of requests and of records read back)
/// Swift 6 language mode everywhere; CI adds `-warnings-as-errors`.
let strict: [SwiftSetting] = [.swiftLanguageMode(.v6)]

let package = Package(
    name: "Provisioner",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "provisioner", targets: ["provisioner"]),
        // The benchmarks: a binary of their own, never in the image (it starts the `provisioner` built next to it).
        .executable(name: "provisioner-bench", targets: ["provisioner-bench"]),
        // For Swift backends: build, send and await provisioning requests (reply routing, JWE).
        .library(name: "ProvisionerClient", targets: ["ProvisionerClient"]),
    ],
    targets: [
        // C libraries from Debian, each with a header of inline shims for macros and variadics.
        .systemLibrary(name: "CRdKafka", pkgConfig: "rdkafka", providers: [.apt(["librdkafka-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CMicroHTTPD", pkgConfig: "libmicrohttpd", providers: [.apt(["libmicrohttpd-dev"])]),
        // glibc's GNU extensions for descriptors (pipe2, posix_spawn closefrom): declarations only.
        .systemLibrary(name: "CPosix"),

        // Kafka binding: knows nothing of provisioning.
        .target(name: "Kafka", dependencies: ["CRdKafka", "CPosix"], swiftSettings: strict),
        // Wire contract: schemas, validation, outcomes, redaction, JWE. No Kafka, no HTTP.
        .target(name: "Contract", dependencies: ["COpenSSL"], swiftSettings: strict),
        // HTTP transport: libcurl multi client and libmicrohttpd server.
        .target(name: "HTTP", dependencies: ["CCurl", "CMicroHTTPD", "CPosix"], swiftSettings: strict),
        // Logging and metrics behind small protocols, Prometheus exposition, health endpoint.
        .target(name: "Observability", dependencies: ["HTTP"], swiftSettings: strict),
        // Issuer adapters: a validated request in, an HTTP exchange, an outcome out.
        .target(name: "Issuers", dependencies: ["Contract", "HTTP", "Observability"], swiftSettings: strict),
        // Issuer simulator: Imprint, DCS, Gnosis Pay, Worldpay over real HTTP.
        .target(name: "Simulator", dependencies: ["Contract", "HTTP", "COpenSSL"], swiftSettings: strict),
        // Reconciliation jobs, call markers and dead letters (records, headers, the operator tool).
        .target(name: "Recovery", dependencies: ["Contract", "Kafka"], swiftSettings: strict),
        // The backend's client library: Kafka and Contract only, async/await API.
        .target(name: "ProvisionerClient", dependencies: ["Kafka", "Contract"], swiftSettings: strict),
        // The worker: Kafka in, schedule, issuer call, results and audit out.
        .target(name: "Pipeline", dependencies: ["CPosix", "Contract", "Kafka", "Issuers", "Recovery", "Observability", "HTTP"], swiftSettings: strict),
        // The embedded stack (broker, simulator, workers), load generation, child processes and the demo.
        .target(name: "Harness", dependencies: ["CPosix", "Pipeline", "Simulator", "Kafka", "Contract", "Observability", "Recovery"], swiftSettings: strict),
        // The deterministic simulation of the worker's real core: seeded schedules of several workers
        // over a simulated cluster, issuer and clock (`provisioner simulate`, SimulationTests).
        .target(name: "CoreSimulation", dependencies: ["Pipeline", "Kafka", "Contract", "HTTP", "Observability", "Recovery", "Issuers", "Simulator"],
                swiftSettings: strict),
        // The operator console: a web page over Kafka (own consumer, no group) and the workers' /metrics.
        .target(name: "Console", dependencies: ["COpenSSL", "Contract", "Kafka", "HTTP", "Observability", "Recovery"],
                swiftSettings: strict),
        // Subcommands; main.swift only parses arguments and hands over.
        .target(name: "ProvisionerCLI", dependencies: ["Console", "CoreSimulation", "ProvisionerClient", "Pipeline", "Simulator", "Harness", "Recovery", "Kafka", "Contract", "HTTP", "Observability"], swiftSettings: strict),
        .executableTarget(name: "provisioner", dependencies: ["ProvisionerCLI"], swiftSettings: strict),

        // The benchmark scenarios (`provisioner-bench SCENARIO`): load generators and measurements
        // around `provisioner` child processes; the argument parsing is the CLI's.
        .target(name: "ProvisionerBench", dependencies: ["ProvisionerCLI", "Harness", "ProvisionerClient", "Pipeline", "Kafka", "Contract", "HTTP",
                                                         "Issuers", "Observability", "Recovery"], swiftSettings: strict),
        .executableTarget(name: "provisioner-bench", dependencies: ["ProvisionerBench"], swiftSettings: strict),

        // libFuzzer entry point for decode + validate, and for every decoder of a record read back
        // from Kafka (reconcile jobs, call markers, dead letters: Recovery). Built by scripts/fuzz.
        .executableTarget(name: "ContractFuzz", dependencies: ["Contract", "Recovery", "Kafka"], swiftSettings: strict),

        // Shared test helpers: process launching, fixtures, Kafka readers. Used only by tests.
        .target(name: "TestSupport", dependencies: ["CPosix", "Harness", "Kafka", "Contract", "Simulator", "Observability"], swiftSettings: strict),

        .testTarget(name: "KafkaTests", dependencies: ["Kafka", "Contract", "Pipeline", "Recovery", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "ContractTests", dependencies: ["Contract", "TestSupport"], exclude: ["Fixtures", "FuzzCorpus"], swiftSettings: strict),
        .testTarget(name: "ObservabilityTests", dependencies: ["Observability", "HTTP", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "HTTPTests", dependencies: ["CPosix", "HTTP", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "IssuersTests", dependencies: ["Issuers", "Simulator", "Contract", "HTTP"], swiftSettings: strict),
        .testTarget(name: "SimulatorTests", dependencies: ["Simulator", "Contract", "HTTP"], swiftSettings: strict),
        .testTarget(name: "PipelineTests", dependencies: ["Pipeline", "Kafka", "Simulator", "Contract", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "ClientTests", dependencies: ["ProvisionerClient", "Pipeline", "Kafka", "Simulator", "Contract", "Harness", "TestSupport"],
                    swiftSettings: strict),
        .testTarget(name: "RecoveryTests", dependencies: ["Recovery", "Pipeline", "Kafka", "Simulator", "Contract", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "SimulationTests", dependencies: ["CoreSimulation", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "ReliabilityTests", dependencies: ["Pipeline", "Kafka", "Simulator", "Contract", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "ConsoleTests", dependencies: ["Console", "Pipeline", "Kafka", "Contract", "Recovery", "HTTP", "Observability",
                                                     "Harness", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "DeployTests", dependencies: ["Console", "ProvisionerCLI", "ProvisionerBench", "Pipeline", "TestSupport", "Harness", "Kafka", "HTTP", "Contract",
                                                    "Observability", "Recovery", "Simulator"], swiftSettings: strict),
    ]
)
