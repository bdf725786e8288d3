import Contract
import Foundation
import Harness
import Kafka
import Pipeline
import Recovery
import Simulator
import Testing
import TestSupport

/// Payment action links are capabilities: they travel only sealed to the requester, a payment
/// action is accepted only from a signing program, and a link acts only on the authorization
/// the request names.
extension PaymentTests {
    @Test("links only sealed (results, markers, audit scanned); unsigned payment_action refused; a link of another payment refused; signed settle works")
    func linksAreCapabilities() async throws {
        let rig = try PipelineRig(partitions: 3)
        defer { rig.stop() }
        try Self.startSigningWorker(rig)
        try rig.formGroupAndWarmUp()

        // Two signed authorizations, and one through the program that does not sign.
        let first = rig.factory.payment(program: "demo-worldpay", transactionReference: Self.reference())
        let second = rig.factory.payment(program: "demo-worldpay", transactionReference: Self.reference())
        let open = rig.factory.payment(program: "demo-worldpay-open", transactionReference: Self.reference())
        try Self.sendSigned(rig, first)
        try Self.sendSigned(rig, second)
        try rig.send(open)
        let authorizations = [first, second, open]
        try #require(rig.waitForFinals(authorizations.map(\.requestID)), "no final for \(rig.missingFinals(authorizations.map(\.requestID)))")
        var snapshot = rig.collector.snapshot
        let links = try authorizations.map { request in
            let result = try #require(snapshot.final(request.requestID))
            try #require(result.status == .authorized, "\(request.program): \(result.status.rawValue)")
            return try Self.links(of: result, request)
        }
        let references = try authorizations.map { try #require(Self.transactionReference(of: $0)) }

        // Signed settle of the first through its own link: over HTTP to the simulator.
        let settle = rig.factory.paymentAction(program: "demo-worldpay", action: .settle, link: try #require(links[0].settle).revealed,
                                               transactionReference: references[0])
        // Signed, but the second payment's link under the first's reference.
        let crossed = rig.factory.paymentAction(program: "demo-worldpay", action: .cancel, link: try #require(links[1].cancel).revealed,
                                                transactionReference: references[0])
        // Signed, a reference Worldpay does not know.
        let unknown = rig.factory.paymentAction(program: "demo-worldpay", action: .cancel, link: try #require(links[1].cancel).revealed,
                                                transactionReference: Self.reference("-none"))
        // Unsigned program: its own payment, its own link, its own reference.
        let unsigned = rig.factory.paymentAction(program: "demo-worldpay-open", action: .settle, link: try #require(links[2].settle).revealed,
                                                 transactionReference: references[2])
        try Self.sendSigned(rig, settle)
        try Self.sendSigned(rig, crossed)
        try Self.sendSigned(rig, unknown)
        try rig.send(unsigned)
        let actions = [settle, crossed, unknown, unsigned]
        try #require(rig.waitForFinals(actions.map(\.requestID)), "no final for \(rig.missingFinals(actions.map(\.requestID)))")
        try rig.expectQuiet()
        snapshot = rig.collector.snapshot

        let settled = try #require(snapshot.final(settle.requestID))
        #expect(settled.status == .settled && settled.kind == .paymentAction, "\(settled.status.rawValue) / \(settled.code?.rawValue ?? "-")")
        #expect(try await Self.lastEvent(rig, reference: references[0]) == "settled")
        #expect(rig.simulatorCalls(card: references[0]).contains { $0.handshake == "settle" && $0.count == 1 })

        let refusedCrossed = try #require(snapshot.final(crossed.requestID))
        #expect(refusedCrossed.status == .rejected && refusedCrossed.code == .invalidRequest
                && refusedCrossed.message.contains("not a link of the payment"), "\(refusedCrossed.status.rawValue): \(refusedCrossed.message)")
        let refusedUnknown = try #require(snapshot.final(unknown.requestID))
        #expect(refusedUnknown.status == .rejected && refusedUnknown.code == .invalidRequest
                && refusedUnknown.message.contains("no payment with payment_action.transaction_reference"), "\(refusedUnknown.message)")
        let refusedUnsigned = try #require(snapshot.final(unsigned.requestID))
        #expect(refusedUnsigned.status == .rejected && refusedUnsigned.code == .invalidRequest
                && refusedUnsigned.message.contains("request_signing"), "\(refusedUnsigned.status.rawValue): \(refusedUnsigned.message)")
        // Neither refused action reached Worldpay: the second and the unsigned program's payments
        // saw their authorization only, and are still authorized.
        for index in [1, 2] {
            #expect(rig.simulatorCalls(card: references[index]).map(\.handshake).allSatisfy { !["settle", "partial_settle", "cancel"].contains($0) },
                    "\(references[index]): \(rig.simulatorCalls(card: references[index]))")
            #expect(try await Self.lastEvent(rig, reference: references[index]) == "authorized")
        }

        // No link, nor any link token, in clear on the results, markers or audit topics (values
        // and headers, decisions included); the tokens are where they belong: in the sealed payloads.
        let tokens = links.flatMap { Array($0.tokens) }
        try #require(tokens.count >= 3 && tokens.allSatisfy { $0.count > 20 }, "no link tokens to look for: the scan checks nothing")
        let needles = tokens.map { Array($0.utf8) }
        func leaks(_ bytes: [UInt8]) -> Bool {
            needles.contains { needle in
                bytes.count >= needle.count && bytes.indices.dropLast(needle.count - 1).contains { bytes[$0..<$0 + needle.count].elementsEqual(needle) }
            }
        }
        let reader = KafkaTestReader(bootstrapServers: rig.stack.bootstrapServers)
        var decisions = 0
        var scanned = 0
        for topic in [rig.stack.topics.results, rig.stack.topics.markers, rig.stack.topics.audit] {
            for message in try await reader.readExisting(topic: topic) {
                scanned += 1
                if message.headers.contains(where: { $0.key == CallMarker.decisionHeader }) { decisions += 1 }
                #expect(!leaks(message.value), "a payment link in clear in \(topic) at \(message.partition):\(message.offset)")
                for header in message.headers {
                    #expect(!leaks(header.value ?? []), "a payment link in clear in \(topic) header \(header.key)")
                }
            }
        }
        #expect(decisions >= 3, "no decision markers read (\(decisions)): the markers scan checks nothing")
        #expect(scanned > 20, "only \(scanned) records scanned")
        for line in rig.logs.renderedLines { #expect(!leaks(Array(line.utf8)), "a payment link in a log line") }
    }
}
