import Contract
import Foundation
import Kafka
import ProvisionerClient
import Simulator
import Harness
import Testing
import TestSupport

/// `ProvisionerClient` end to end: a real worker and the issuer simulator over HTTP on the
/// embedded broker; the client produces, awaits on its own reply partition and decrypts.
@Suite("ProvisionerClient end to end", .serialized, .timeLimit(.minutes(10)))
struct ProvisionerClientTests {
    @Test("Apple Pay and Google Wallet: typed, decrypted values and next_action")
    func answersAreDecryptedIntoTypedValues() async throws {
        let rig = try ClientRig()
        defer { rig.stop() }
        let (client, _) = try rig.client(partition: 0)
        defer { client.close() }
        let apple = try await client.provision(try ClientRig.apple())
        #expect(apple.status == .provisioned && apple.isFinal && apple.nextAction == .addToWallet)
        guard case .apple(let activation, let pass, let ephemeral)? = apple.payload else {
            Issue.record("no Apple payload: \(String(describing: apple.payloadProblem))")
            return
        }
        #expect(!activation.isEmpty && !pass.isEmpty)
        #expect(ephemeral.count == 65 && ephemeral.first == 0x04, "an uncompressed P-256 point, as PKAddPaymentPassRequest takes it")
        let google = try await client.provision(ClientRig.google())
        #expect(google.status == .provisioned && google.nextAction == .addToWallet)
        guard case .googleWallet(let card, let opc)? = google.payload else {
            Issue.record("no Google payload: \(String(describing: google.payloadProblem))")
            return
        }
        #expect(!card.revealed.isEmpty)
        #expect(opc?.revealed.isEmpty == false, "the OPC Google asked for")
    }

    /// A signing program (`request_signing.keys`): the client signs v3 with the key it names, for the
    /// partition murmur2 of the card id picks on the requests topic, writes the request there, and
    /// the worker answers it.
    @Test("a signing program: the client writes each request to the partition murmur2 of its card id picks, signed v3 for it with its key id; answered")
    func signedRequestsNameTheirPartition() async throws {
        let rig = try ClientRig(signingSecret: "client-signing-" + Crypto.hex(Crypto.randomBytes(16)), signingKeyID: "2026-12")
        defer { rig.stop() }
        let (client, _) = try rig.client(partition: 2)
        defer { client.close() }
        var requests: [ClientRequest] = []
        for _ in 0..<6 { requests.append(ClientRig.google()) }
        requests.append(try ClientRig.apple())
        for request in requests {
            let answer = try await client.provision(request)
            #expect(answer.status == .provisioned && answer.isFinal, "\(request.requestID): \(answer.status)")
        }
        let records = try await KafkaTestReader(bootstrapServers: rig.stack.bootstrapServers).readExisting(topic: rig.stack.topics.requests)
        for request in requests {
            let record = try #require(records.first { (try? JSONParser().parse($0.value))?["request_id"]?.stringValue == request.requestID })
            let expected = RequestPartitioner.partition(key: Array(request.cardID.utf8), count: 3)
            #expect(record.partition == expected && record.header(RequestSignature.partitionHeader) == Array(String(expected).utf8))
            #expect(record.header(RequestSignature.header).map { String(decoding: $0, as: UTF8.self).hasPrefix("v3=") } == true)
            #expect(record.header(RequestSignature.keyIDHeader) == Array("2026-12".utf8))
        }
    }

    @Test("an X25519 reply key (RFC 8037 OKP): requests carry it, the worker encrypts to it, the client decrypts both wallets")
    func x25519ReplyKey() async throws {
        let rig = try ClientRig()
        defer { rig.stop() }
        let (client, key) = try rig.client(partition: 3, key: try ReplyPrivateKey.generate(.x25519))
        defer { client.close() }
        #expect(key.curve == .x25519)
        let apple = try await client.provision(try ClientRig.apple())
        #expect(apple.status == .provisioned && apple.isFinal && apple.nextAction == .addToWallet)
        guard case .apple(let activation, let pass, _)? = apple.payload else {
            Issue.record("no Apple payload: \(String(describing: apple.payloadProblem))")
            return
        }
        #expect(!activation.isEmpty && !pass.isEmpty)
        // The JWE's epk is an X25519 key: the worker encrypted to the OKP reply key, not to a P-256 one.
        let jwe = try #require(apple.result.payload)
        let header = try JSONParser().parse(try #require(Crypto.base64URLDecode(String(jwe.split(separator: ".")[0]))))
        #expect(header["epk"]?["kty"]?.stringValue == "OKP" && header["epk"]?["crv"]?.stringValue == "X25519")
        let google = try await client.provision(ClientRig.google())
        guard case .googleWallet(let card, _)? = google.payload else {
            Issue.record("no Google payload: \(String(describing: google.payloadProblem))")
            return
        }
        #expect(!card.revealed.isEmpty)
    }

    @Test("1,000 concurrent requests from one client: each answered once, final, decrypted")
    func thousandConcurrentRequests() async throws {
        let rig = try ClientRig()
        defer { rig.stop() }
        let (client, _) = try rig.client(partition: 1)
        defer { client.close() }
        let answers = try await withThrowingTaskGroup(of: ProvisioningAnswer.self) { group in
            for _ in 0..<1_000 { group.addTask { try await client.provision(ClientRig.google()) } }
            var all: [ProvisioningAnswer] = []
            for try await answer in group { all.append(answer) }
            return all
        }
        #expect(answers.count == 1_000)
        #expect(Set(answers.map(\.requestID)).count == 1_000)
        #expect(answers.allSatisfy { $0.status == .provisioned && $0.isFinal })
        #expect(answers.allSatisfy { if case .googleWallet? = $0.payload { true } else { false } }, "every payload decrypted")
        #expect(client.replyCounts.ignored == 0, "nothing foreign or duplicated on the client's partition: \(client.replyCounts)")
    }

    @Test("two clients on different partitions each read only their own answers")
    func twoClientsSeeOnlyTheirOwn() async throws {
        let rig = try ClientRig()
        defer { rig.stop() }
        let (first, _) = try rig.client(partition: 2)
        let (second, _) = try rig.client(partition: 3)
        defer { first.close(); second.close() }
        let requests = (0..<60).map { _ in ClientRig.google() }
        let answers = try await withThrowingTaskGroup(of: (Int, ProvisioningAnswer).self) { group in
            for (index, request) in requests.enumerated() {
                let client = index.isMultiple(of: 2) ? first : second
                group.addTask { (index, try await client.provision(request)) }
            }
            var all: [(Int, ProvisioningAnswer)] = []
            for try await answer in group { all.append(answer) }
            return all
        }
        #expect(answers.count == 60)
        for (index, answer) in answers { #expect(answer.requestID == requests[index].requestID && answer.status == .provisioned) }
        #expect(first.replyCounts == (read: 30, ignored: 0), "\(first.replyCounts)")
        #expect(second.replyCounts == (read: 30, ignored: 0), "\(second.replyCounts)")
    }

    @Test("a client closed mid-wait is told closed; a new client on the same partition finds the answer by lookup")
    func lookupAfterRestart() async throws {
        let rig = try ClientRig()
        defer { rig.stop() }
        let (client, key) = try rig.client(partition: 0)
        let request = ClientRig.google("-slow-3000")
        let sentAt = Date()
        let waiting = Task { try await client.provision(request) }
        try await Task.sleep(for: .milliseconds(500))
        client.close()
        await #expect(throws: ProvisionerClientError.self) { try await waiting.value }
        // Before the answer exists, lookup finds nothing; afterwards it finds it (same key: it decrypts).
        let (restarted, _) = try rig.client(partition: 0, key: key)
        defer { restarted.close() }
        var found: ProvisioningAnswer?
        for _ in 0..<60 where found == nil {
            found = try await restarted.lookup(requestID: request.requestID, program: request.program, wallet: .googleWallet,
                                               correlationID: request.correlationID, since: sentAt)
            if found == nil { try await Task.sleep(for: .milliseconds(500)) }
        }
        let answer = try #require(found, "the answer was published to the reply partition")
        #expect(answer.status == .provisioned && answer.isFinal)
        #expect(answer.payload != nil, "decrypted with the backend's key: \(String(describing: answer.payloadProblem))")
        #expect(try await restarted.lookup(requestID: "cl-never-sent", program: request.program, wallet: .googleWallet,
                                           correlationID: request.correlationID, since: sentAt) == nil)
        // The answer counts only for the request it answers: program, wallet and correlation id.
        #expect(try await restarted.lookup(requestID: request.requestID, program: "demo-dcs", wallet: .googleWallet,
                                           correlationID: request.correlationID, since: sentAt) == nil, "another program's request")
        #expect(try await restarted.lookup(requestID: request.requestID, program: request.program, wallet: .googlePay,
                                           correlationID: request.correlationID, since: sentAt) == nil, "another wallet")
        #expect(try await restarted.lookup(requestID: request.requestID, program: request.program, wallet: .googleWallet,
                                           correlationID: [0xEE], since: sentAt) == nil, "another correlation id")
    }

    @Test("504 after applying: the interim indeterminate is not returned; the reconciled provisioned final is")
    func reconciledFinalIsReturned() async throws {
        let rig = try ClientRig()
        defer { rig.stop() }
        let (client, _) = try rig.client(partition: 1)
        defer { client.close() }
        let answer = try await client.provision(try ClientRig.apple("-timeout-applied"))
        #expect(answer.status == .provisioned, "\(answer.status)")
        #expect(answer.isFinal)
        #expect(answer.nextAction == .checkWallet)
        #expect(client.replyCounts.read == 2, "the indeterminate answer was read, then the final: \(client.replyCounts)")
    }

    @Test("only an indeterminate inside the window: it is returned, non-final, with its next_action")
    func interimReturnedWhenNoFinalInTheWindow() async throws {
        let rig = try ClientRig()
        defer { rig.stop() }
        // A window too short for reconciliation's first tier (300 ms) after the 504.
        let (client, _) = try rig.client(partition: 2, windowMs: 2_500)
        defer { client.close() }
        var request = ClientRig.google("-timeout-unapplied")
        request.handshakeAt = Date()
        let answer = try await client.provision(request)
        if answer.isFinal {
            // Reconciliation was faster than the window on this machine: the final is returned, as it must be.
            #expect(answer.status == .notProvisioned)
        } else {
            #expect(answer.status == .indeterminate)
            #expect(answer.nextAction == .restartWalletFlow || answer.nextAction == .retry || answer.nextAction == .checkWallet)
        }
    }

    @Test("a reply topic the worker does not allow: refused on the default results topic; the client hears nothing and says so")
    func disallowedReplyTopicIsRefused() async throws {
        let rig = try ClientRig()
        defer { rig.stop() }
        let (client, _) = try rig.client(partition: 0, topic: "other.replies", windowMs: 4_000)
        defer { client.close() }
        let request = ClientRig.google()
        let error = await #expect(throws: ProvisionerClientError.self) { try await client.provision(request) }
        #expect(error?.code == .noAnswer && error?.message == "no answer within 4000 ms of the handshake")
        #expect(error?.nextAction == .checkWallet, "the caller still learns what to do")
        let results = try await KafkaTestReader(bootstrapServers: rig.stack.bootstrapServers).read(topic: rig.stack.topics.results, timeout: .seconds(30)) {
            $0.contains { (try? ProvisioningResult.decode($0.value))?.requestID == request.requestID }
        }
        let refusal = try #require(results.compactMap { try? ProvisioningResult.decode($0.value) }.first { $0.requestID == request.requestID })
        #expect(refusal.status == .rejected && refusal.code == .invalidRequest)
        let other = try await KafkaTestReader(bootstrapServers: rig.stack.bootstrapServers).readExisting(topic: "other.replies")
        #expect(other.isEmpty)
    }
}

/// `provisioner request`, the built binary, against the same rig.
@Suite("provisioner request (CLI on the client library)", .serialized, .timeLimit(.minutes(5)))
struct RequestCommandTests {
    @Test("one Google Wallet request from flags with an X25519 reply key, --json: provisioned, final, payload decrypted (kind and sizes) but no payload value")
    func requestFromFlagsPrintsTheOutcome() async throws {
        let rig = try ClientRig()
        defer { rig.stop() }
        let ids = SimulatedDevice.googleHandshakeValues()
        let process = try ChildProcess(executable: try BuiltProducts.provisionerPath, arguments: [
            "request", "--bootstrap", rig.stack.bootstrapServers, "--reply-topic", ClientRig.replyTopic, "--reply-partition", "2",
            "--program", "demo-imprint", "--card-id", "pm_cli_\(UUID().uuidString.prefix(6))", "--last4", "4242",
            "--wallet-id", ids.walletID, "--device-id", ids.deviceID, "--opc", "--server-session-id", ids.serverSessionID,
            "--request-id", "cli-req-1", "--reply-curve", "x25519", "--json",
        ])
        let line = try await process.waitForLine(prefix: "{", timeout: .seconds(90))
        let termination = try await process.waitForExit(timeout: .seconds(30))
        let output = process.standardOutputLines.joined(separator: "\n")
        #expect(termination == .exited(0), "\(output)\n\(process.standardErrorLines.joined(separator: "\n"))")
        let document = try JSONParser().parse(line)
        #expect(document["request_id"]?.stringValue == "cli-req-1")
        #expect(document["status"]?.stringValue == "provisioned")
        #expect(document["final"]?.boolValue == true)
        #expect(document["next_action"]?.stringValue == "add_to_wallet")
        #expect(document["payload"]?["kind"]?.stringValue == "google_wallet")
        #expect(document["payload"]?["google_provisioning_payload"]?.boolValue == true)
        #expect(!output.contains(ids.deviceID) && !output.contains(ids.serverSessionID), "no handshake value is printed")
    }

    @Test("one Apple Pay request from --file (PassKit values in base64): provisioned, Apple payload sizes printed")
    func requestFromAFile() async throws {
        let rig = try ClientRig()
        defer { rig.stop() }
        let handshake = try SimulatedDevice().appleHandshake()
        let document: JSONValue = .object([
            "program": .string("demo-imprint"), "request_id": .string("cli-file-1"), "wallet": .string("apple_pay"),
            "card": .object(["id": .string("pm_cli_\(UUID().uuidString.prefix(6))"), "last4": .string("4242")]),
            "apple": .object(handshake.requestFields),
        ])
        let file = NSTemporaryDirectory() + "request-\(UUID().uuidString).json"
        try Data(JSONWriter.encode(document)).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let process = try ChildProcess(executable: try BuiltProducts.provisionerPath, arguments: [
            "request", "--bootstrap", rig.stack.bootstrapServers, "--reply-topic", ClientRig.replyTopic, "--reply-partition", "1", "--file", file,
        ])
        let line = try await process.waitForLine(prefix: "cli-file-1:", timeout: .seconds(90))
        #expect(try await process.waitForExit(timeout: .seconds(30)) == .exited(0))
        #expect(line.hasPrefix("cli-file-1: provisioned, next_action add_to_wallet; payload: Apple Pay (activation_data "), "\(line)")
        #expect(line.contains("ephemeral_public_key 65 B"), "\(line)")
        #expect(!line.contains(handshake.nonce), "no handshake value is printed")
    }

    @Test("no answer in the window: exit 1 with a one-line reason")
    func noAnswerExitsOne() async throws {
        let rig = try ClientRig()
        defer { rig.stop() }
        let process = try ChildProcess(executable: try BuiltProducts.provisionerPath, arguments: [
            "request", "--bootstrap", rig.stack.bootstrapServers, "--reply-topic", "other.replies", "--reply-partition", "0",
            "--program", "demo-imprint", "--card-id", "pm_cli_refused", "--last4", "4242", "--wallet-id", "w1", "--device-id", "d1",
            "--window-ms", "3000",
        ])
        let line = try await process.waitForLine(prefix: "provisioner request:", in: .standardError, timeout: .seconds(60))
        #expect(try await process.waitForExit(timeout: .seconds(30)) == .exited(1))
        #expect(line.contains("no_answer"), "\(line)")
    }
}
