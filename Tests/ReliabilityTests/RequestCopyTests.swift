import Contract
import Foundation
import Harness
import Kafka
import Observability
import Recovery
import Testing
import TestSupport

/// A request's identity holds across the whole group: two `provisioner worker` processes share six
/// partitions, and a keyless producer (the raw producer here) copies a signed request byte for byte
/// — key, value and every header — onto each partition it was not written to.
extension ReliabilityTests {
    /// A signed Apple Pay request is written to partition 0 and answered; then its byte copies go
    /// to partitions 1-5, where the other worker's duplicate filter, nonce guard and markers never
    /// saw it (and this worker's markers are per partition). Each copy must be refused as
    /// unauthentic (it was signed for partition 0): a dead letter `unauthenticated` naming its
    /// partition, no answer anywhere. Must not happen: a second issuer call with the handshake, a
    /// second final for the request (before, the issuer's refusal of the spent nonce came back as
    /// `rejected` after `provisioned`).
    @Test("byte copies of an answered signed request on every other partition reach no issuer and add no final")
    func signedCopiesOnOtherPartitions() async throws {
        let partitions = 6
        let rig = try await IdentityRig(name: "reliability-copies", partitions: partitions)
        defer { rig.stop() }
        let first = try rig.spawn("copies-w1")
        defer { first.process.kill() }
        let second = try rig.spawn("copies-w2")
        defer { second.process.kill() }
        try #require(await ChildWorker.waitForGroup([first, second], partitions: partitions),
                     "the two workers did not share the partitions: \(ChildWorker.describeGroup([first, second]))")

        let cardID = "pm_copied_apple"
        let genuine = try rig.factory.provision(program: "demo-imprint", wallet: .applePay, cardID: cardID,
                                                requestID: rig.factory.requestID("copied"))
        let correlation = Crypto.randomBytes(16)
        let headers = RequestSigner(secret: Sensitive(rig.secret)).signed(key: genuine.key, value: genuine.value,
                                                                         headers: IdentityRig.route(correlation), partition: 0,
                                                                         nowMs: Timestamps.nowMs())
        try await rig.send(key: genuine.key, value: genuine.value, headers: headers, partition: 0)
        let reader = KafkaTestReader(bootstrapServers: rig.rig.endpoints.bootstrapServers)
        let answered = try? await reader.read(topic: IdentityRig.replyTopic, timeout: .seconds(30)) { messages in
            messages.contains { (try? ProvisioningResult.decode($0.value)).map { Self.answers($0, genuine) && $0.isFinal } == true }
        }
        try #require(answered != nil, "the genuine request was never answered")

        let copyPartitions = Array(Int32(1)..<Int32(partitions))
        for partition in copyPartitions {
            try await rig.send(key: genuine.key, value: genuine.value, headers: headers, partition: partition)
        }
        // Each copy has an outcome on its partition: a dead letter, or (were it taken as genuine) a
        // published result or a duplicate.
        func settled(_ snapshot: ResultCollector.Snapshot) -> Set<Int32> {
            let letters = snapshot.deadLetters.filter { $0.summary.requestID == genuine.requestID }.compactMap { $0.provenance?.originalPartition }
            let events = snapshot.audit.filter { event in
                event.requestID == genuine.requestID && [.resultPublished, .duplicateIgnored].contains(event.stage)
            }.compactMap(\.partition)
            return Set(letters + events).intersection(copyPartitions)
        }
        let allSettled = rig.collector.wait(timeoutMs: 45_000) { settled($0).count == copyPartitions.count }
        #expect(allSettled, "copies settled on partitions \(settled(rig.collector.snapshot).sorted()) of \(copyPartitions)")

        // The issuer saw the handshake once.
        let calls = rig.rig.simulator.calls.filter { $0.cardID == cardID }
        #expect(calls.map(\.count) == [1] && calls.first?.handshake == genuine.handshake, "issuer calls: \(calls)")
        // Exactly one final for the request, on its reply partition; nothing on the default results topic.
        let replies = try await rig.replies().compactMap { try? ProvisioningResult.decode($0.value) }.filter { Self.answers($0, genuine) }
        let snapshot = rig.collector.snapshot
        let elsewhere = (snapshot.results[genuine.requestID] ?? []).map(\.result)
        let finals = (replies + elsewhere).filter(\.isFinal)
        #expect(finals.count == 1 && finals.first?.status == .provisioned,
                "finals: \(finals.map { "\($0.status) \($0.code?.rawValue ?? "-")" })")
        // Each copy: a dead letter `unauthenticated` from its own partition that says why; audited as refused.
        let letters = snapshot.deadLetters.filter { $0.summary.requestID == genuine.requestID }
        #expect(letters.compactMap { $0.provenance?.originalPartition }.sorted() == copyPartitions,
                "dead letters from partitions \(letters.compactMap { $0.provenance?.originalPartition }.sorted())")
        for letter in letters {
            #expect(letter.provenance?.code == .unauthenticated && letter.provenance?.isReplayable == false,
                    "\(letter.provenance?.code.rawValue ?? "-")")
            #expect(letter.provenance?.reason.contains("signed for partition 0") == true, "\(letter.provenance?.reason ?? "-")")
        }
        let refused = snapshot.audit.filter { $0.requestID == genuine.requestID && $0.stage == .rejected && $0.code == .unauthenticated }
        #expect(Set(refused.compactMap(\.partition)) == Set(copyPartitions), "refusals audited on \(refused.compactMap(\.partition))")
    }
}
