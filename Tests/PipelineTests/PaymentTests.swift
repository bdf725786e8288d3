import Contract
import Foundation
import Harness
import HTTP
import Kafka
import Observability
import Pipeline
import Recovery
import Simulator
import Synchronization
import Testing
import TestSupport

/// Apple Pay payments through Worldpay, end to end — authorization, refusal,
/// reconciliation after a 504, settle / partial settle / cancel through the links, forged links,
/// and the wallet token kept out of everything but the issuer call.
@Suite("End to end: Worldpay payments", .serialized, .timeLimit(.minutes(10)))
struct PaymentTests {
    /// Counts requests to a server that must never be called.
    private final class Hits: Sendable {
        let count = Mutex(0)
    }

    static func reference(_ suffix: String = "") -> String { "e2e-\(Crypto.hex(Crypto.randomBytes(5)))\(suffix)" }

    /// The payment's last event according to the simulator itself (not through the worker):
    /// nil when Worldpay has no payment with that reference.
    static func lastEvent(_ rig: PipelineRig, reference: String) async throws -> String? {
        let client = HTTPClient()
        defer { client.shutdown() }
        let request = HTTPClientRequest(method: "GET", url: "\(rig.stack.simulatorURL)/worldpay/payments/events?transactionReference=\(reference)",
                                        headers: [HTTPHeader(name: "Authorization", value: "Bearer sim-worldpay-key")], timeoutMs: 10_000)
        let response = try await client.execute(request).get()
        if response.status == 404 { return nil }
        #expect(response.status == 200)
        return try JSONParser().parse(response.body)["lastEvent"]?.stringValue
    }

    /// The signing key the rigs of the signed tests give `demo-worldpay` (a payment action needs one).
    static let signingSecret = "worldpay-signing-" + Crypto.hex(Crypto.randomBytes(16))
    static let signingVariable = "PAYMENT_TESTS_WORLDPAY_SIGNING"

    /// Starts a worker on which `demo-worldpay` signs its requests; `demo-worldpay-open` is the
    /// same Worldpay account as a program that does not sign.
    @discardableResult
    static func startSigningWorker(_ rig: PipelineRig) throws -> Worker {
        try rig.startWorker(extraEnvironment: [signingVariable: signingSecret]) {
            var open = $0.programs["demo-worldpay"]
            open?.name = "demo-worldpay-open"
            $0.programs["demo-worldpay-open"] = open
            $0.programs["demo-worldpay"]?.requestSigningSecret = .environment(signingVariable)
        }
    }

    /// Sends `request` signed (v3) for the partition its key maps to, as a signing producer does.
    static func sendSigned(_ rig: PipelineRig, _ request: GeneratedRequest) throws {
        let partition = RequestPartitioner.partition(key: request.key, count: rig.stack.partitions)
        let headers = RequestSigner(secret: Sensitive(signingSecret)).signed(key: request.key, value: request.value, headers: [],
                                                                            partition: partition, nowMs: Timestamps.nowMs())
        try rig.send(key: request.key, value: request.value, partition: partition, headers: headers)
    }

    /// The action links sealed in an authorization's `payload`, opened with the request's reply key.
    static func links(of result: ProvisioningResult, _ request: GeneratedRequest) throws -> PaymentLinks {
        let jwe = try #require(result.payload, "no sealed payload on \(result.status.rawValue)")
        let key = try #require(request.replyKey)
        return try PaymentLinks.decode(plaintext: try JWE.decrypt(jwe, with: key))
    }

    @Test("authorized, refused, and 504s reconciled to the truth")
    func paymentOutcomes() async throws {
        let rig = try PipelineRig(partitions: 3)
        defer { rig.stop() }
        try rig.startWorker()
        try rig.formGroupAndWarmUp()

        let authorized = rig.factory.payment(program: "demo-worldpay", transactionReference: Self.reference())
        let refused = rig.factory.payment(program: "demo-worldpay", transactionReference: Self.reference("-refused"))
        let applied = rig.factory.payment(program: "demo-worldpay", transactionReference: Self.reference("-timeout-applied"))
        let unapplied = rig.factory.payment(program: "demo-worldpay", transactionReference: Self.reference("-timeout-unapplied"))
        let all = [authorized, refused, applied, unapplied]
        for request in all { try rig.send(request) }
        let ids = all.map(\.requestID)
        try #require(rig.waitForFinals(ids), "no final result for \(rig.missingFinals(ids))")
        try rig.expectQuiet()
        let snapshot = rig.collector.snapshot
        let simulatorBase = "\(rig.stack.simulatorURL)/worldpay/"

        // Authorized: masked instrument, and the four links sealed in the payload to reply.jwk.
        let ok = try #require(snapshot.final(authorized.requestID))
        #expect(ok.status == .authorized && ok.code == nil && ok.attempt == 1 && ok.kind == .payment)
        #expect(snapshot.results[authorized.requestID]?.count == 1)
        let payment = try #require(ok.payment)
        #expect(payment.outcome == "authorized")
        let instrument = try #require(payment.paymentInstrument, "no masked payment instrument")
        #expect(instrument.type == "card/network+masked")
        #expect(instrument.lastFour?.count == 4 && instrument.cardBin == "444433" && instrument.cardBrand == "visa")
        #expect(payment.links == nil, "links in clear in the result")
        let links = try Self.links(of: ok, authorized)
        for (name, link) in [("settle", links.settle), ("partialSettle", links.partialSettle), ("cancel", links.cancel), ("events", links.events)] {
            let href = try #require(link, "no \(name) link").revealed
            #expect(href.hasPrefix(simulatorBase), "\(name) link \(href) does not point at the issuer")
        }

        // Refused: the refusal code travels; final at once; nothing to act on.
        let no = try #require(snapshot.final(refused.requestID))
        #expect(no.status == .refused && no.code == .paymentRefused && no.attempt == 1)
        #expect(no.payment?.refusalCode == "5" && no.issuerCode == "5")
        #expect(no.payment?.links == nil && no.payload == nil)
        #expect(snapshot.results[refused.requestID]?.count == 1)

        // 504 after authorizing: indeterminate first, then the truth (authorized, with links).
        let appliedResults = try #require(snapshot.results[applied.requestID]).map(\.result)
        #expect(appliedResults.count == 2, "results: \(appliedResults.map(\.status.rawValue))")
        #expect(appliedResults.first?.status == .indeterminate && appliedResults.first?.isFinal == false
                && appliedResults.first?.code == .issuerTimeout)
        let appliedFinal = try #require(snapshot.final(applied.requestID))
        #expect(appliedFinal.status == .authorized && appliedFinal.attempt == 2, "\(appliedFinal.status.rawValue) attempt \(appliedFinal.attempt)")
        // Reconciliation has no reply key: the reconciled authorization carries no links at all.
        #expect(appliedFinal.payment?.outcome == "authorized" && appliedFinal.payment?.links == nil && appliedFinal.payload == nil)
        #expect(try await Self.lastEvent(rig, reference: "\(try #require(Self.transactionReference(of: applied)))") == "authorized")

        // 504 without authorizing: indeterminate first, then a final answer that is not authorized.
        let unappliedResults = try #require(snapshot.results[unapplied.requestID]).map(\.result)
        #expect(unappliedResults.count == 2, "results: \(unappliedResults.map(\.status.rawValue))")
        #expect(unappliedResults.first?.status == .indeterminate && unappliedResults.first?.isFinal == false)
        let unappliedFinal = try #require(snapshot.final(unapplied.requestID))
        #expect(unappliedFinal.attempt == 2)
        #expect(![.authorized, .settled, .indeterminate].contains(unappliedFinal.status), "\(unappliedFinal.status.rawValue)")
        #expect(unappliedFinal.code == .issuerTimeout && unappliedFinal.nextAction == .retry)
        #expect(try await Self.lastEvent(rig, reference: try #require(Self.transactionReference(of: unapplied))) == nil)

        #expect(rig.waitForAudit([applied, unapplied].map(\.requestID), .reconciled), "no reconciled audit event")
        for request in [applied, unapplied] {
            #expect(rig.audit(request.requestID, .reconcileScheduled).count == 1)
            #expect(rig.audit(request.requestID, .reconciled).count == 1)
        }
        // One authorization call each; reconciliation only reads.
        for request in all {
            let reference = try #require(Self.transactionReference(of: request))
            #expect(rig.simulatorCalls(card: reference).map(\.count) == [1], "\(reference): \(rig.simulatorCalls(card: reference))")
        }
    }

    @Test("settle, partial settle and cancel through the links; a forged link is refused without a call")
    func actionsThroughLinks() async throws {
        let rig = try PipelineRig(partitions: 3)
        defer { rig.stop() }
        try Self.startSigningWorker(rig)
        try rig.formGroupAndWarmUp()
        let hits = Hits()
        let rogue = try HTTPServer(host: "127.0.0.1", port: 0) { _, responder in
            hits.count.withLock { $0 += 1 }
            responder.respond(.json(202, Array(#"{"outcome":"sentForSettlement"}"#.utf8)))
        }
        defer { rogue.stop() }

        let payments = (0..<4).map { _ in rig.factory.payment(program: "demo-worldpay", transactionReference: Self.reference(), amountMinorUnits: 250) }
        for request in payments { try Self.sendSigned(rig, request) }
        try #require(rig.waitForFinals(payments.map(\.requestID)))
        var snapshot = rig.collector.snapshot
        let links = try payments.map { request in
            let result = try #require(snapshot.final(request.requestID))
            try #require(result.status == .authorized, "\(result.status.rawValue)")
            return try Self.links(of: result, request)
        }
        let references = try payments.map { try #require(Self.transactionReference(of: $0)) }

        let settle = rig.factory.paymentAction(program: "demo-worldpay", action: .settle, link: try #require(links[0].settle).revealed,
                                               transactionReference: references[0])
        let partial = rig.factory.paymentAction(program: "demo-worldpay", action: .partialSettle,
                                                link: try #require(links[1].partialSettle).revealed,
                                                transactionReference: references[1], amountMinorUnits: 100)
        let cancel = rig.factory.paymentAction(program: "demo-worldpay", action: .cancel, link: try #require(links[2].cancel).revealed,
                                               transactionReference: references[2])
        // Forged: the real link's path and token on another origin (a server we own), on another
        // host name, and hidden behind user information.
        let genuine = try #require(links[3].settle).revealed
        let simulatorOrigin = rig.stack.simulatorURL
        let path = String(genuine.dropFirst(simulatorOrigin.count))
        // On the Worldpay host itself: another action's link, another payments
        // path, another API, a way out of the action's path, a query, a second segment.
        let token = try #require(genuine.split(separator: "/").last.map(String.init))
        let worldpay = simulatorOrigin + "/worldpay"
        let forgedLinks = [
            "http://127.0.0.1:\(rogue.port)\(path)",
            "http://localhost:\(rig.stack.simulator.port)\(path)",
            "http://127.0.0.1:\(rig.stack.simulator.port)@127.0.0.1:\(rogue.port)\(path)",
            try #require(links[3].cancel).revealed,
            worldpay + "/payments/events/" + token,
            worldpay + "/cardPayments/customerInitiatedTransactions",
            worldpay + "/payments/settlements/full/../../authorizations/cancellations/" + token,
            genuine + "?reference=other",
            genuine + "/more",
            worldpay + "/payments/settlements/full/",
        ]
        let forged = forgedLinks.map {
            rig.factory.paymentAction(program: "demo-worldpay", action: .settle, link: $0, transactionReference: references[3])
        }
        let actions = [settle, partial, cancel] + forged
        for request in actions { try Self.sendSigned(rig, request) }
        let ids = actions.map(\.requestID)
        try #require(rig.waitForFinals(ids), "no final result for \(rig.missingFinals(ids))")
        try rig.expectQuiet()
        snapshot = rig.collector.snapshot

        for (request, status) in [(settle, ResultStatus.settled), (partial, .settled), (cancel, .cancelled)] {
            let result = try #require(snapshot.final(request.requestID))
            #expect(result.status == status && result.kind == .paymentAction,
                    "\(request.requestID): \(result.status.rawValue) / \(result.code?.rawValue ?? "-")")
        }
        // Settle, partial settle (Worldpay's 202 `sentForPartialSettlement`) and cancel are each
        // answered once, final at the first attempt.
        for request in [settle, partial, cancel] {
            let results = snapshot.results[request.requestID]?.map(\.result) ?? []
            #expect(results.count == 1 && results.first?.attempt == 1 && results.first?.isFinal == true, "\(results.map(\.status.rawValue))")
        }
        #expect(try await Self.lastEvent(rig, reference: references[0]) == "settled")
        #expect(try await Self.lastEvent(rig, reference: references[1]) == "partiallySettled")
        #expect(try await Self.lastEvent(rig, reference: references[2]) == "cancelled")
        #expect(rig.simulatorCalls(card: references[0]).contains { $0.handshake == "settle" && $0.count == 1 })
        #expect(rig.simulatorCalls(card: references[1]).contains { $0.handshake == "partial_settle" && $0.count == 1 })
        #expect(rig.simulatorCalls(card: references[2]).contains { $0.handshake == "cancel" && $0.count == 1 })

        for request in forged {
            let result = try #require(snapshot.final(request.requestID))
            #expect(result.status == .rejected && result.code == .invalidRequest,
                    "forged link: \(result.status.rawValue) / \(result.code?.rawValue ?? "-")")
            // Refused at intake: no audit event (and no call marker) claims a call started.
            let stages = snapshot.audit.filter { $0.requestID == request.requestID }.map(\.stage)
            #expect(stages.contains(.rejected) && !stages.contains(.issuerCallStarted), "forged link audit: \(stages)")
        }
        #expect(hits.count.withLock { $0 } == 0, "the worker followed a forged link to another server")
        let forgedIDs = Set(forged.map(\.requestID))
        let markers = try await KafkaTestReader(bootstrapServers: rig.stack.bootstrapServers).readExisting(topic: rig.stack.topics.markers)
        // Every answered request leaves a `completed` marker; a call leaves a `started` one.
        let startedIDs = Set(markers.compactMap { record -> String? in
            guard let marker = try? JSONParser().parse(record.value), marker["state"]?.stringValue == "started" else { return nil }
            return marker["request_id"]?.stringValue
        })
        #expect(startedIDs.contains(settle.requestID), "the markers read found no started marker of a real call: it checks nothing")
        #expect(startedIDs.isDisjoint(with: forgedIDs), "a started call marker was written for a forged link")
        // The payment behind the forged links was never touched: only its authorization was called.
        #expect(rig.simulatorCalls(card: references[3]).map(\.count) == [1], "\(rig.simulatorCalls(card: references[3]))")
        #expect(try await Self.lastEvent(rig, reference: references[3]) == "authorized")
    }

    @Test("the wallet token never reaches audit events, logs, metrics, reconciliation jobs, markers or dead-letter headers")
    func walletTokenCanary() async throws {
        let rig = try PipelineRig(partitions: 3, keepRaw: true)
        defer { rig.stop() }
        let worker = try rig.startWorker(level: .debug)
        try rig.formGroupAndWarmUp()

        let marker = "Canary" + Crypto.hex(Crypto.randomBytes(9))
        func withCanary(_ request: GeneratedRequest) throws -> GeneratedRequest {
            var document = try #require(try JSONParser().parse(request.value).objectValue)
            var payment = try #require(document["payment"]?.objectValue)
            var token = try #require(try JSONParser().parse(Array(SimulatedDevice.applePayToken().utf8)).objectValue)
            let data = try #require(token["data"]?.stringValue)
            token["data"] = .string(marker + data.dropFirst(marker.count))
            payment["wallet_token"] = .string(String(decoding: JSONWriter.encode(.object(token)), as: UTF8.self))
            document["payment"] = .object(payment)
            var copy = request
            copy.value = JSONWriter.encode(.object(document))
            return copy
        }
        let requests = try [
            withCanary(rig.factory.payment(program: "demo-worldpay", transactionReference: Self.reference())),
            withCanary(rig.factory.payment(program: "demo-worldpay", transactionReference: Self.reference("-refused"))),
            withCanary(rig.factory.payment(program: "demo-worldpay", transactionReference: Self.reference("-timeout-applied"))),
            withCanary(rig.factory.payment(program: "demo-worldpay", transactionReference: Self.reference("-timeout-unapplied"))),
            // Rejected by validation (amount not positive) and by the issuer (currency not ISO 4217).
            withCanary(rig.factory.payment(program: "demo-worldpay", transactionReference: Self.reference(), amountMinorUnits: 0)),
            withCanary(rig.factory.payment(program: "demo-worldpay", transactionReference: Self.reference(), currency: "gbp")),
            // Sent to a provisioning program.
            withCanary(rig.factory.payment(program: "demo-imprint", transactionReference: Self.reference())),
        ]
        for request in requests { try rig.send(request) }
        // Dead letters: an unknown version and a missing request_id, both carrying the token.
        let template = String(decoding: requests[0].value, as: UTF8.self)
        let unknownVersion = template.replacingOccurrences(of: #""version":1"#, with: #""version":2"#)
        let noRequestID = template.replacingOccurrences(of: #""request_id":"\#(requests[0].requestID)","#, with: "")
        try #require(unknownVersion != template && noRequestID != template)
        try rig.send(key: Array("dead-1".utf8), value: Array(unknownVersion.utf8))
        try rig.send(key: Array("dead-2".utf8), value: Array(noRequestID.utf8))

        let ids = requests.map(\.requestID)
        try #require(rig.waitForFinals(ids), "no final result for \(rig.missingFinals(ids))")
        let deadLettered = rig.collector.wait(timeoutMs: 30_000) { $0.deadLetters.count >= 2 }
        try #require(deadLettered, "the undecodable payments were not dead-lettered")
        try rig.expectQuiet()
        let audited = rig.collector.wait(timeoutMs: 30_000) { snapshot in
            ids.allSatisfy { id in snapshot.audit.contains { $0.requestID == id && $0.stage == .resultPublished } }
                && snapshot.audit.filter { $0.stage == .deadLettered }.count >= 2
        }
        #expect(audited, "audit events missing")

        let snapshot = rig.collector.snapshot
        let needle = Array(marker.utf8)
        func leaks(_ bytes: [UInt8]) -> Bool { bytes.count >= needle.count && bytes.indices.dropLast(needle.count - 1).contains { bytes[$0..<$0 + needle.count].elementsEqual(needle) } }

        // Dead-letter values are the original messages (kept for replay); everything else is not.
        let deadLetterValues = snapshot.deadLetters.compactMap(\.value)
        #expect(deadLetterValues.count == 2 && deadLetterValues.allSatisfy(leaks), "the canary is not where it should be: the test checks nothing")
        var scanned = 0
        for record in snapshot.rawRecords where !deadLetterValues.contains(record) {
            scanned += 1
            #expect(!leaks(record), "the wallet token leaked into a record: \(String(decoding: record.prefix(200), as: UTF8.self))")
        }
        #expect(scanned > snapshot.audit.count, "too few records scanned")
        for entry in snapshot.deadLetters {
            for header in entry.headers {
                #expect(!leaks(header.value ?? []), "the wallet token leaked into dead-letter header \(header.key)")
            }
        }
        let reader = KafkaTestReader(bootstrapServers: rig.stack.bootstrapServers)
        for topic in [rig.stack.topics.reconcile, rig.stack.topics.markers] {
            for message in try await reader.readExisting(topic: topic) {
                #expect(!leaks(message.value) && !message.headers.contains { leaks($0.value ?? []) }, "the wallet token leaked into \(topic)")
            }
        }
        let lines = rig.logs.renderedLines
        #expect(lines.filter { $0.contains("message dead-lettered") }.count == 2, "the dead letters were not logged: the log check checks nothing")
        for line in lines { #expect(!line.contains(marker), "the wallet token leaked into a log line: \(line.prefix(200))") }
        let metrics = try #require(rig.metrics(of: worker)).renderPrometheus()
        #expect(!metrics.contains(marker))
        // The token did reach the issuer: the authorization's handshake is its digest.
        let tokens = try requests.prefix(4).map { request -> String in
            try #require(JSONParser().parse(request.value)["payment"]?["wallet_token"]?.stringValue)
        }
        for token in tokens {
            #expect(rig.stack.simulator.calls.contains { $0.handshake == SimulatorCall.worldpayHandshake(walletToken: token) })
        }
    }

    static func transactionReference(of request: GeneratedRequest) -> String? {
        guard let document = try? JSONParser().parse(request.value) else { return nil }
        return (document["payment"] ?? document["payment_action"])?["transaction_reference"]?.stringValue
    }
}
