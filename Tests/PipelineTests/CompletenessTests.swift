import Contract
import Foundation
import Harness
import Kafka
import Observability
import Pipeline
import Testing

/// Every request gets exactly one final result, with the right status.
@Suite("End to end: one final result per request", .serialized, .timeLimit(.minutes(10)))
struct CompletenessTests {
    @Test("the demo's self-checking mix passes with 60 requests and 2 workers")
    func smallDemoRunSucceeds() throws {
        var options = DemoOptions()
        options.total = 60
        options.workers = 2
        options.timeoutSeconds = 120
        let report = try DemoRun.run(options) { _ in }
        #expect(report.succeeded, "\(report.text)")
    }

    @Test("every wallet on every issuer: each request exactly one final result with the expected status")
    func mixOverWalletsAndIssuers() throws {
        let rig = try PipelineRig(partitions: 3)
        defer { rig.stop() }
        try rig.startWorker("worker-1")
        try rig.startWorker("worker-2")
        try rig.formGroupAndWarmUp()

        struct Case { var label: String; var request: GeneratedRequest; var status: ResultStatus; var code: ErrorCode? }
        var cases: [Case] = []
        func card() -> String { "pm_mix_" + Crypto.hex(Crypto.randomBytes(5)) }
        let provisioning: [(String, Wallet, Bool, ResultStatus, ErrorCode?)] = [
            ("demo-imprint", .applePay, true, .provisioned, nil),
            ("demo-imprint", .googleWallet, true, .provisioned, nil),
            ("demo-imprint", .googleWallet, false, .provisioned, nil),
            ("demo-imprint", .googlePay, true, .provisioned, nil),
            ("demo-dcs", .applePay, true, .provisioned, nil),
            ("demo-dcs", .googleWallet, false, .provisioned, nil),
            ("demo-dcs", .googleWallet, true, .rejected, .walletUnsupported),
            ("demo-dcs", .googlePay, true, .provisioned, nil),
            ("demo-gnosis", .applePay, true, .provisioned, nil),
            ("demo-gnosis", .googleWallet, true, .rejected, .walletUnsupported),
            ("demo-gnosis", .googlePay, true, .rejected, .walletUnsupported),
            ("demo-worldpay", .applePay, true, .rejected, .kindUnsupported),
            ("demo-worldpay", .googlePay, true, .rejected, .kindUnsupported),
        ]
        for round in 0..<3 {
            for (program, wallet, opc, status, code) in provisioning {
                let request = try rig.factory.provision(program: program, wallet: wallet, cardID: card(), opcRequested: opc,
                                                        deviceType: round == 1 ? "apple_watch" : "iphone")
                cases.append(Case(label: "\(program) \(wallet.rawValue) opc=\(opc)", request: request, status: status, code: code))
            }
            let payment = rig.factory.payment(program: "demo-worldpay", transactionReference: "mix-\(Crypto.hex(Crypto.randomBytes(5)))",
                                              subscription: round == 2)
            cases.append(Case(label: "demo-worldpay payment", request: payment, status: .authorized, code: nil))
        }
        for item in cases { try rig.send(item.request) }
        let ids = cases.map(\.request.requestID)
        #expect(rig.waitForFinals(ids), "no final result for \(rig.missingFinals(ids))")
        try rig.expectQuiet()

        let snapshot = rig.collector.snapshot
        #expect(snapshot.undecodableResults == 0)
        for item in cases {
            let received = snapshot.results[item.request.requestID] ?? []
            let finals = received.filter(\.result.isFinal)
            #expect(finals.count == 1, "\(item.label): \(finals.count) final results")
            #expect(received.count == 1, "\(item.label): \(received.count) results in all")
            guard let final = finals.first?.result else { continue }
            #expect(final.status == item.status, "\(item.label): \(final.status.rawValue) / \(final.code?.rawValue ?? "-")")
            #expect(final.code == item.code, "\(item.label): code \(final.code?.rawValue ?? "-")")
            #expect(final.program == item.request.program && final.wallet == item.request.wallet && final.kind == item.request.kind,
                    "\(item.label): result names another request's program, wallet or kind")
            if final.status == .provisioned {
                let payload = try #require(final.payload, "\(item.label): provisioned without a payload")
                #expect(throws: Never.self) { try JWE.decrypt(payload, with: try #require(item.request.replyKey)) }
            }
        }
        // Nothing arrived for requests that were not sent (warm-up aside).
        let sent = Set(ids)
        let strays = snapshot.results.keys.filter { !sent.contains($0) && !$0.hasPrefix("warmup") }
        #expect(strays.isEmpty, "results for unknown request ids: \(strays)")
    }
}
