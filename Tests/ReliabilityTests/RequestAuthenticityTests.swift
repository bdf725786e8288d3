import Contract
import Foundation
import Harness
import Kafka
import Observability
import Pipeline
import Testing
import TestSupport

extension ReliabilityTests {
    /// `demo-imprint` is configured with `request_signing`: unsigned and badly signed requests are
    /// answered `rejected` / `unauthenticated` (and audited) without reaching the issuer; correctly
    /// signed ones (`RequestSignature.sign`, or `provisioner produce --sign-env`) are provisioned;
    /// other programs are not affected, whatever signature header they carry.
    @Test("request signing: unsigned and badly signed requests rejected and audited, signed ones accepted, other programs unaffected")
    func requestAuthenticity() async throws {
        let partitions = 3
        let stack = try EmbeddedStack(brokers: 1, partitions: partitions)
        defer { stack.stop() }
        let secret = "imprint-signing-" + Crypto.hex(Crypto.randomBytes(16))
        var environment = stack.environment
        environment["RELIABILITY_IMPRINT_SIGNING"] = secret
        let group = UniqueName.make("reliability-signing")
        let configuration = try stack.configuration(groupID: group, workerID: "signing-w1") {
            $0.programs["demo-imprint"]?.requestSigningSecretEnvironmentVariable = "RELIABILITY_IMPRINT_SIGNING"
        }
        let logs = CapturingLogHandler()
        let worker = try Worker(configuration: configuration, environment: environment,
                                logger: Logger(label: "worker", minimumLevel: .info, handler: logs))
        try worker.start()
        defer {
            worker.shutdown()
            worker.waitUntilStopped()
        }
        try #require(await Waiting.until(timeoutMs: 60_000) { worker.assignedPartitionCount == partitions })
        let collector = try ResultCollector(properties: stack.consumerProperties, topics: stack.topics, partitions: partitions)
        defer { collector.stop() }
        let producer = try KafkaProducer(configuration: stack.producerProperties)
        defer { producer.close(timeoutMs: 5_000) }
        let factory = try RequestFactory(devices: 1)

        struct Case { var name: String; var request: GeneratedRequest; var headers: [KafkaHeader]; var accepted: Bool }
        var cases: [Case] = []
        func sign(_ value: [UInt8], with key: String = secret) -> KafkaHeader {
            KafkaHeader(key: RequestSignature.header, string: RequestSignature.sign(secret: Sensitive(key), value: value))
        }
        func imprint(_ wallet: Wallet = .googlePay) throws -> GeneratedRequest {
            try factory.provision(program: "demo-imprint", wallet: wallet, cardID: "pm_sig_\(cases.count)", requestID: factory.requestID("sig"))
        }
        var request = try imprint()
        cases.append(Case(name: "unsigned", request: request, headers: [], accepted: false))
        request = try imprint()
        cases.append(Case(name: "signed with another secret", request: request, headers: [sign(request.value, with: secret + "x")], accepted: false))
        request = try imprint()
        let other = try imprint()
        cases.append(Case(name: "signature of another request", request: request, headers: [sign(other.value)], accepted: false))
        request = try imprint()
        var tampered = request
        tampered.value = JSONValue.parsed(request.value).setting("card.last4", .string("0000")).bytes
        cases.append(Case(name: "signed, then the body changed", request: tampered, headers: [sign(request.value)], accepted: false))
        request = try imprint()
        let good = RequestSignature.sign(secret: Sensitive(secret), value: request.value)
        cases.append(Case(name: "unknown scheme v2=", request: request,
                          headers: [KafkaHeader(key: RequestSignature.header, string: "v2=" + good.dropFirst(3))], accepted: false))
        request = try imprint()
        cases.append(Case(name: "not hex", request: request, headers: [KafkaHeader(key: RequestSignature.header, string: "v1=zz")], accepted: false))
        request = try imprint()
        cases.append(Case(name: "empty header", request: request, headers: [KafkaHeader(key: RequestSignature.header, value: [])], accepted: false))
        request = try imprint()
        cases.append(Case(name: "truncated signature", request: request,
                          headers: [KafkaHeader(key: RequestSignature.header, string: String(RequestSignature.sign(secret: Sensitive(secret),
                                                                                                                     value: request.value).dropLast(2)))],
                          accepted: false))
        request = try imprint()
        cases.append(Case(name: "signed (Google Pay)", request: request, headers: [sign(request.value)], accepted: true))
        request = try imprint(.applePay)
        cases.append(Case(name: "signed (Apple Pay)", request: request, headers: [sign(request.value)], accepted: true))
        request = try factory.provision(program: "demo-dcs", wallet: .googleWallet, cardID: "pm_sig_dcs", requestID: factory.requestID("sig"),
                                        opcRequested: false)
        cases.append(Case(name: "other program, unsigned", request: request, headers: [], accepted: true))
        request = try factory.provision(program: "demo-gnosis", wallet: .applePay, cardID: "pm_sig_gnosis", requestID: factory.requestID("sig"))
        cases.append(Case(name: "other program, garbage signature", request: request,
                          headers: [KafkaHeader(key: RequestSignature.header, string: "v1=00")], accepted: true))
        for item in cases {
            try producer.send(KafkaOutgoingMessage(topic: stack.topics.requests, key: item.request.key, value: item.request.value,
                                                   headers: item.headers)) { _ in }
        }

        // `provisioner produce` as a child process: with --sign-env (accepted) and without (rejected).
        var cliSigned: [GeneratedRequest] = []
        var cliUnsigned: [GeneratedRequest] = []
        for index in 0..<3 {
            cliSigned.append(try factory.provision(program: "demo-imprint", wallet: .googlePay, cardID: "pm_sig_cli_\(index)",
                                                   requestID: factory.requestID("sig-cli")))
            cliUnsigned.append(try factory.provision(program: "demo-imprint", wallet: .googlePay, cardID: "pm_sig_cli_u\(index)",
                                                     requestID: factory.requestID("sig-cli-unsigned")))
        }
        func produce(_ requests: [GeneratedRequest], sign: Bool) async throws -> ChildProcess.Termination {
            let input: [UInt8] = requests.reduce(into: []) { $0 += $1.value + [0x0A] }
            let process = try ChildProcess(executable: try BuiltProducts.provisionerPath,
                                           arguments: ["produce", "--bootstrap", stack.bootstrapServers] + (sign ? ["--sign-env", "RELIABILITY_CLI_SECRET"] : []),
                                           environment: ["RELIABILITY_CLI_SECRET": secret], standardInput: input)
            return try await process.waitForExit(timeout: .seconds(60))
        }
        #expect(try await produce(cliSigned, sign: true) == .exited(0))
        #expect(try await produce(cliUnsigned, sign: false) == .exited(0))

        let all = cases.map(\.request.requestID) + cliSigned.map(\.requestID) + cliUnsigned.map(\.requestID)
        let answered = collector.wait(timeoutMs: 60_000) { snapshot in all.allSatisfy { snapshot.final($0) != nil } }
        let snapshot = collector.snapshot
        #expect(answered, "unanswered: \(all.filter { snapshot.final($0) == nil })")
        let expectations = cases.map { ($0.name, $0.request, $0.accepted) }
            + cliSigned.map { ("provisioner produce --sign-env", $0, true) } + cliUnsigned.map { ("provisioner produce (unsigned)", $0, false) }
        var wrong: [String] = []
        var rejectedAudited = 0
        let calledCards = Set(stack.simulator.calls.map(\.cardID))
        for (name, request, accepted) in expectations {
            guard let final = snapshot.final(request.requestID) else { continue }
            let card = JSONValue.parsed(request.value)["card"]?["id"]?.stringValue ?? ""
            if accepted {
                if final.status != .provisioned { wrong.append("\(name): \(final.status.rawValue)/\(final.code?.rawValue ?? "-"), expected provisioned") }
            } else {
                if final.status != .rejected || final.code != .unauthenticated {
                    wrong.append("\(name): \(final.status.rawValue)/\(final.code?.rawValue ?? "-"), expected rejected/unauthenticated")
                }
                if calledCards.contains(card) { wrong.append("\(name): the issuer was called") }
                let audited = snapshot.audit.contains {
                    $0.requestID == request.requestID && $0.stage == .rejected && $0.code == .unauthenticated && $0.program == "demo-imprint"
                }
                if audited { rejectedAudited += 1 } else { wrong.append("\(name): no rejected/unauthenticated audit event") }
            }
        }
        #expect(wrong.isEmpty, "\(wrong)")
        let secretLeaked = logs.records.contains { record in record.fields.contains { "\($0.1)".contains(secret) } || record.message.contains(secret) }
            || snapshot.audit.contains { ($0.reason.map { "\($0)" } ?? "").contains(secret) }
        #expect(!secretLeaked, "the signing secret appeared in a log record or an audit event")
        let rejected = expectations.filter { !$0.2 }.count
        ReliabilityReport.emit("request_signing", [
            "requests": ReliabilityReport.int(expectations.count), "bad_or_missing_signatures": ReliabilityReport.int(rejected),
            "rejected_unauthenticated_and_audited": ReliabilityReport.int(rejectedAudited),
            "accepted": ReliabilityReport.int(expectations.filter(\.2).count), "misjudged": ReliabilityReport.int(wrong.count),
            "via_provisioner_produce": ReliabilityReport.int(cliSigned.count + cliUnsigned.count),
        ])
    }
}
