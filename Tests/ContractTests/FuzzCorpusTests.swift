import Contract
import Foundation
import Testing
import TestSupport

/// Replays the committed fuzz seed corpus (and any crash reproducers added to it) through decode
/// and validate: none may crash, and the well-formed seeds must decode.
@Suite("Fuzz corpus regressions", .timeLimit(.minutes(5)))
struct FuzzCorpusTests {
    static var files: [URL] {
        ((try? FileManager.default.contentsOfDirectory(at: Fixtures.corpusDirectory, includingPropertiesForKeys: nil)) ?? [])
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }

    @Test func corpusReplaysWithoutCrashing() throws {
        let files = Self.files
        #expect(files.count >= 10)
        let validator = RequestValidator()
        var decoded = 0
        for file in files {
            let bytes = [UInt8](try Data(contentsOf: file))
            if case .decoded(let request) = RequestDecoder.decode(bytes) {
                decoded += 1
                for issuer in IssuerKind.allCases { _ = validator.validate(request, issuer: issuer) }
            }
        }
        #expect(decoded >= 6)
    }

    /// The corpus through the fuzz harness itself (the `ContractFuzz` replay build): besides
    /// decode and validate, its invariants — the JSON writer round-trips what the parser accepts,
    /// a request stripped of its Apple handshake no longer has one, a rejection's result decodes
    /// back to itself, a decoded request re-encodes stably. A broken invariant traps the process.
    @Test func corpusHoldsTheFuzzHarnessInvariants() throws {
        let files = Self.files
        try #require(files.count >= 10)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try BuiltProducts.path(of: "ContractFuzz"))
        process.arguments = files.map(\.path)
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationReason == .exit && process.terminationStatus == 0,
                "ContractFuzz ended with \(process.terminationReason == .exit ? "status" : "signal") \(process.terminationStatus): \(text)")
        #expect(text.contains("replayed \(files.count) input(s) without a crash"), "\(text)")
    }

    @Test func seedRequestsAreValidForTheirIssuers() throws {
        let expectations: [(String, IssuerKind)] = [("apple.json", .imprint), ("gnosis.json", .gnosis), ("google-wallet.json", .imprint),
                                                   ("google-pay.json", .dcs), ("payment.json", .worldpay),
                                                   ("payment-action.json", .worldpay)]
        for (name, issuer) in expectations {
            let bytes = [UInt8](try Data(contentsOf: Fixtures.corpusDirectory.appendingPathComponent(name)))
            guard case .decoded(let request) = RequestDecoder.decode(bytes) else {
                Issue.record("\(name) does not decode")
                continue
            }
            let failure = RequestValidator().validate(request, issuer: issuer)
            #expect(failure == nil, "\(name): \(failure?.message ?? "")")
        }
    }
}
