import Contract
import Dispatch
import Foundation
import Kafka

/// A Swift backend's side of provisioning: builds a request from the wallet's handshake, produces
/// it keyed by card id with reply-routing headers naming the client's own reply partition, and
/// awaits its answer there, decrypted.
///
/// ```swift
/// let client = try ProvisionerClient(configuration: .init(kafka: ["bootstrap.servers": "kafka:9092"],
///                                                         replyTopic: "backend.replies", replyPartition: 3, replyKey: key))
/// let answer = try await client.provision(ClientRequest(program: "acme-imprint", cardID: "pm_1", last4: "4242",
///                                                       handshake: .apple(certificates: certs, nonce: nonce, nonceSignature: signature)))
/// ```
///
/// At-least-once aware: duplicate answers are ignored; a non-final `indeterminate` is returned
/// only when no final answer arrives inside the window. An answer counts only when its correlation
/// id, program and request id are the request's. After a restart,
/// `lookup(requestID:program:wallet:correlationID:since:)` finds an answer nobody awaited. Threads: the reply reader's poll thread, the producer's
/// delivery thread and window timers call into `PendingReplies`; callers only `await`.
public final class ProvisionerClient: Sendable {
    private let configuration: ProvisionerClientConfiguration
    private let publicKey: JWERecipient
    private let producer: KafkaProducer
    private let pending = PendingReplies()
    private let reader: ReplyReader
    private let timers = DispatchQueue(label: "provisioner-client.windows")
    /// The requests topic's partition count, read at start when the client signs (a signed
    /// request names the partition it is written to: signature v3).
    private let requestPartitionCount: Int?

    /// Connects: creates the producer, reads the requests topic's partition count when the client
    /// signs (a signed request names its partition), and assigns the reply partition at its end,
    /// before any request can be sent.
    public init(configuration: ProvisionerClientConfiguration) throws(ProvisionerClientError) {
        self.configuration = configuration
        do {
            publicKey = try configuration.replyKey.recipient
        } catch {
            throw ProvisionerClientError(.invalidRequest, "the reply key has no usable public half: \(error.message)")
        }
        do {
            var properties = configuration.kafka
            properties["linger.ms"] = properties["linger.ms"] ?? "1"
            // A batch within the requests topic's max.message.bytes (librdkafka does not split a refused batch).
            properties["batch.size"] = properties["batch.size"] ?? String(RecordBounds.Incoming.requestsTopicMaxMessageBytes)
            producer = try KafkaProducer(configuration: properties)
        } catch {
            throw ProvisionerClientError(.kafka, "the producer could not be created: \(error.description)")
        }
        do {
            requestPartitionCount = configuration.signingSecret == nil ? nil
                : try producer.partitionCount(topic: configuration.requestsTopic, timeoutMs: 10_000)
        } catch {
            producer.close(timeoutMs: 1_000)
            throw ProvisionerClientError(.kafka, "the requests topic's partition count could not be read: \(error.description)")
        }
        do {
            reader = try ReplyReader(properties: configuration.kafka, fetchWaitMs: configuration.replyFetchWaitMs,
                                     partition: TopicPartition(topic: configuration.replyTopic, partition: configuration.replyPartition),
                                     pending: pending)
        } catch {
            producer.close(timeoutMs: 1_000)
            throw ProvisionerClientError(.kafka, "the reply partition could not be assigned: \(error.description)")
        }
    }

    /// Sends `request` and returns its answer: the final one, or the last non-final one when no
    /// final came inside the window (`answerWindowMs`, else the wallet's contract window from the handshake).
    public func provision(_ request: ClientRequest) async throws(ProvisionerClientError) -> ProvisioningAnswer {
        let correlation = request.correlationID
        let message = self.message(for: request, correlation: correlation)
        let windowMs = configuration.windowMs(for: request.wallet)
        let endsAt = request.startedAtMs + windowMs
        let pending = self.pending
        let result: Result<ProvisioningResult, ProvisionerClientError> = await withCheckedContinuation { continuation in
            if let refused = pending.register(request.identity, correlation: correlation, completion: { continuation.resume(returning: $0) }) {
                continuation.resume(returning: .failure(refused))
                return
            }
            let delayMs = max(0, endsAt - Self.nowMs())
            timers.asyncAfter(deadline: .now() + .milliseconds(Int(min(delayMs, 3_600_000)))) {
                pending.expire(correlation: correlation, windowMs: windowMs)
            }
            send(message, correlation: correlation, attempt: 1)
        }
        switch result {
        case .success(let result): return answer(result, wallet: request.wallet)
        case .failure(let error): throw error.for(request.wallet)
        }
    }

    /// Looks up the answer to request `requestID` of `program` (a `wallet` provisioning, sent with
    /// `correlationID`: `ClientRequest.correlationID`) on the reply partition, from `since` (when
    /// it was sent, or earlier) to the partition's current end: the final answer if there is one,
    /// else the last non-final one, nil when nothing was answered. A record counts only when its
    /// key, correlation id, request id, program, wallet and kind are the request's. For requests
    /// whose answer nobody awaited (the backend restarted mid-wait).
    public func lookup(requestID: String, program: String, wallet: Wallet, correlationID: [UInt8],
                       since: Date) async throws(ProvisionerClientError) -> ProvisioningAnswer? {
        let partition = TopicPartition(topic: configuration.replyTopic, partition: configuration.replyPartition)
        let properties = ReplyReader.properties(configuration.kafka, fetchWaitMs: configuration.replyFetchWaitMs)
        let sinceMs = Int64((since.timeIntervalSince1970 * 1000).rounded(.down))
        let found: Result<ProvisioningResult?, ProvisionerClientError> = await withCheckedContinuation { continuation in
            let thread = Thread {
                let awaited = ReplyLookup.Awaited(identity: RequestIdentity(program: program, requestID: requestID), wallet: wallet,
                                                  correlationID: correlationID)
                continuation.resume(returning: ReplyLookup.find(awaited, in: partition, sinceMs: sinceMs, properties: properties))
            }
            thread.name = "provisioner-client-lookup"
            thread.start()
        }
        return try found.get().map { answer($0, wallet: wallet) }
    }

    /// Ends every wait (`closed`), stops the reply reader and flushes the producer.
    public func close() {
        pending.close()
        reader.stop()
        producer.close(timeoutMs: 5_000)
    }

    /// Messages read from the reply partition so far, and how many matched no request awaited here.
    public var replyCounts: (read: Int, ignored: Int) { pending.counts }

    // MARK: - Internals

    private func message(for request: ClientRequest, correlation: [UInt8]) -> KafkaOutgoingMessage {
        let value = request.encodedJSON(replyKey: publicKey)
        let key = Array(request.cardID.utf8)
        let route = ReplyRoute(topic: configuration.replyTopic, partition: configuration.replyPartition, correlationID: correlation)
        var headers = route.requestHeaders.map { KafkaHeader(key: $0.name, value: $0.value) }
        var partition: Int32?
        if let secret = configuration.signingSecret, let count = requestPartitionCount {
            // Signature v3: written to the partition the contract's partitioner picks, which it names.
            let chosen = RequestPartitioner.partition(key: key, count: count)
            partition = chosen
            headers.append(KafkaHeader(key: RequestSignature.partitionHeader, string: String(chosen)))
            if let keyID = configuration.signingKeyID { headers.append(KafkaHeader(key: RequestSignature.keyIDHeader, string: keyID)) }
            let now = Self.nowMs()
            let signature = RequestSignature.sign(.v3, secret: secret, key: key, timestampMs: now, value: value) { name in
                RequestSignature.Header(headers.last { $0.key == name }.map(\.value))
            }
            headers.append(KafkaHeader(key: RequestSignature.timestampHeader, string: String(now)))
            headers.append(KafkaHeader(key: RequestSignature.header, string: signature))
        }
        return KafkaOutgoingMessage(topic: configuration.requestsTopic, key: key, value: value, headers: headers, partition: partition)
    }

    /// Produces `message`, waiting a little while the local queue is full; a delivery failure ends the wait.
    private func send(_ message: KafkaOutgoingMessage, correlation: [UInt8], attempt: Int) {
        let pending = self.pending
        do {
            try producer.send(message) { outcome in
                if case .failure(let error) = outcome {
                    pending.fail(correlation: correlation, error: ProvisionerClientError(.kafka, "the request was not delivered: \(error.description)"))
                }
            }
        } catch {
            if error.code == .queueFull && attempt < 400 {
                timers.asyncAfter(deadline: .now() + .milliseconds(5)) { [self] in send(message, correlation: correlation, attempt: attempt + 1) }
            } else {
                pending.fail(correlation: correlation, error: ProvisionerClientError(.kafka, "the request could not be produced: \(error.description)"))
            }
        }
    }

    private func answer(_ result: ProvisioningResult, wallet: Wallet) -> ProvisioningAnswer {
        guard let jwe = result.payload else { return ProvisioningAnswer(result: result, payload: nil, payloadProblem: nil) }
        switch DecryptedPayload.open(jwe, with: configuration.replyKey, wallet: result.wallet ?? wallet) {
        case .success(let payload): return ProvisioningAnswer(result: result, payload: payload, payloadProblem: nil)
        case .failure(let problem): return ProvisioningAnswer(result: result, payload: nil, payloadProblem: problem.message)
        }
    }

    static func nowMs() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }
}
