import Foundation
import Kafka
import Synchronization
import Testing
import TestSupport

@Suite("Producer failures reach the caller", .timeLimit(.minutes(5)))
struct KafkaProducerFailureTests {
    @Test("a non-retriable produce error injected by the cluster fails the delivery with that code")
    func injectedProduceError() async throws {
        let cluster = try TestCluster()
        let topic = try cluster.makeTopic(partitions: 1)
        let producer = try cluster.producer()
        defer { producer.close(timeoutMs: 1_000) }
        _ = try await producer.send(KafkaOutgoingMessage(topic: topic, value: Array("warm-up".utf8)))

        cluster.cluster.pushRequestErrors(apiKey: .produce, errors: [.messageSizeTooLarge])
        let failure = await #expect(throws: KafkaError.self) {
            _ = try await producer.send(KafkaOutgoingMessage(topic: topic, value: Array("rejected".utf8)))
        }
        #expect(failure?.code == .messageSizeTooLarge)
        #expect(failure?.isRetriable == false)
        #expect(failure?.message.contains(topic) == true)

        let report = try await producer.send(KafkaOutgoingMessage(topic: topic, value: Array("accepted".utf8)))
        #expect(report.offset == 1, "the rejected record was not written")
    }

    @Test("a record that cannot be delivered within message.timeout.ms fails with messageTimedOut")
    func messageTimeout() async throws {
        let cluster = try TestCluster()
        let topic = try cluster.makeTopic(partitions: 1)
        cluster.cluster.setTopicError(topic, error: .unknownTopicOrPartition)
        let producer = try cluster.producer(["message.timeout.ms": "300"])
        defer { producer.close(timeoutMs: 1_000) }

        let failure = await #expect(throws: KafkaError.self) {
            _ = try await producer.send(KafkaOutgoingMessage(topic: topic, value: Array("lost".utf8)))
        }
        #expect(failure?.code == .messageTimedOut)
        #expect(failure?.isRetriable == true)
        #expect(failure?.message.contains("message.timeout.ms") == true)
    }

    @Test("a full local queue is reported synchronously by send, and the record is not kept")
    func queueFull() throws {
        let cluster = try TestCluster()
        let topic = try cluster.makeTopic(partitions: 1)
        let producer = try cluster.producer(["queue.buffering.max.messages": "1", "linger.ms": "1000"])
        defer { producer.close(timeoutMs: 5_000) }
        let recorder = DeliveryRecorder()

        try producer.send(KafkaOutgoingMessage(topic: topic, value: Array("queued".utf8)), onDelivery: recorder.callback)
        let (failure, canary) = Canary.send(KafkaOutgoingMessage(topic: topic, value: Array("overflow".utf8)), with: producer)
        let error = try #require(failure)
        #expect(error.code == .queueFull)
        #expect(error.isRetriable)
        #expect(error.message.contains("queue"))
        #expect(canary.value == nil, "the callback of a record that was not enqueued is released at once")

        #expect(producer.flush(timeoutMs: 10_000))
        #expect(recorder.count == 1)
        #expect((try? recorder.all.first?.get()) != nil)
    }

    @Test("an explicit partition the topic does not have is rejected without leaking the callback")
    func unknownPartition() async throws {
        let cluster = try TestCluster()
        let topic = try cluster.makeTopic(partitions: 2)
        let producer = try cluster.producer()
        defer { producer.close(timeoutMs: 1_000) }
        _ = try await producer.send(KafkaOutgoingMessage(topic: topic, value: [1], partition: 1))

        let (failure, canary) = Canary.send(
            KafkaOutgoingMessage(topic: topic, value: [2], headers: [KafkaHeader(key: "h", string: "v")], partition: 7),
            with: producer)
        let error = try #require(failure)
        #expect(error.code == .unknownPartition)
        #expect(canary.value == nil, "the callback of a record that was not enqueued is released at once")
        // The first record's callback may still be finishing (its `send` resumes inside it): wait
        // for that one; a leaked count for the rejected record would never go away.
        let deadline = ContinuousClock.now.advanced(by: .seconds(5))
        while producer.outstandingCount > 0 && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(producer.outstandingCount == 0)
    }

    @Test("close fails undeliverable records through their callbacks, and send afterwards throws destroyed")
    func closeWithUndeliverableRecords() async throws {
        let cluster = try TestCluster(brokers: 1)
        let topic = try cluster.makeTopic(partitions: 1)
        let producer = try cluster.producer(["message.timeout.ms": "60000"])
        _ = try await producer.send(KafkaOutgoingMessage(topic: topic, value: Array("delivered".utf8)))
        cluster.cluster.setBrokerDown(1)

        let recorder = DeliveryRecorder()
        for index in 0..<5 {
            try producer.send(KafkaOutgoingMessage(topic: topic, value: Array("stuck-\(index)".utf8)), onDelivery: recorder.callback)
        }
        let started = ContinuousClock.now
        producer.close(timeoutMs: 200)
        #expect(ContinuousClock.now - started < .seconds(30), "close does not wait for message.timeout.ms (60 s)")
        #expect(recorder.count == 5, "every record got exactly one callback")
        let codes = Set(recorder.all.compactMap { result -> KafkaError.Code? in
            if case .failure(let error) = result { error.code } else { nil }
        })
        #expect(codes.isSubset(of: [.purgedFromQueue, .purgedInFlight]) && !codes.isEmpty)

        let error = try #require(throws: KafkaError.self) {
            try producer.send(KafkaOutgoingMessage(topic: topic, value: [0])) { _ in }
        }
        #expect(error.code == .destroyed)
        #expect(!producer.flush(timeoutMs: 10))
        producer.close(timeoutMs: 10)
    }

    @Test("an unknown configuration property is rejected with invalidArgument naming it")
    func badConfiguration() {
        let error = #expect(throws: KafkaError.self) {
            _ = try KafkaProducer(configuration: ["bootstrap.servers": "127.0.0.1:1", "no.such.property": "1"])
        }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.contains("no.such.property") == true)

        let secret = #expect(throws: KafkaError.self) {
            _ = try KafkaProducer(configuration: ["sasl.password": "hunter2", "acks": "sometimes"])
        }
        #expect(secret?.message.contains("hunter2") == false)
    }
}
