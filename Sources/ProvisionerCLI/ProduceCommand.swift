import Contract
import Dispatch
import Foundation
import Kafka
import Observability
import Pipeline
import Recovery
import Synchronization

/// `provisioner produce`: sends requests, one JSON document per line, keyed by `card.id`.
enum ProduceCommand: Command {
    static let name = "produce"
    static let summary = "produces requests (one JSON per line) keyed by card id"
    static let help = """
        usage: provisioner produce --bootstrap B [--file F.jsonl] [--topic T] [--sign-env VAR [--key-id ID]] [--property K=V ...]

        Reads one request per line from F (or standard input) and produces each line unchanged to
        the requests topic, keyed by its card.id (CONTRACT section 3) so one card's requests stay in
        one partition and in order; a line without a readable card.id is sent without a key (the
        worker dead-letters or rejects it, which is what a test of bad input wants). Waits for every
        acknowledgement (acks=all, idempotent) and prints one summary line. Blank lines are skipped.

        options:
          --bootstrap B      bootstrap servers (host:port,...)
          --file F           read from F instead of standard input
          --topic T          topic (default provisioning.requests)
          --sign-env VAR     sign each line (docs/CONTRACT.md, signature v3) with the secret in
                             environment variable VAR (programs configured with request_signing):
                             write it to the partition murmur2(card.id) picks (Java's and librdkafka's
                             keyed partitioner) and add x-request-partition, x-request-timestamp (now,
                             epoch ms) and x-request-signature: v3=<HMAC-SHA256>
          --key-id ID        the id of that secret among the program's keys (request_signing.keys[].id),
                             sent as x-request-key-id (covered); omit it for the program's unnamed key
          --property K=V     an extra librdkafka producer property (repeatable: give it once per property)
        """

    static func run(_ arguments: inout CommandArguments) throws -> Int32 {
        let bootstrap = try arguments.requiredOption("bootstrap")
        let file = arguments.option("file")
        let topic = arguments.option("topic") ?? TopicNames().requests
        let signVariable = arguments.option("sign-env")
        let keyID = arguments.option("key-id")
        // A batch within the requests topic's max.message.bytes (librdkafka does not split a refused batch).
        var properties = ["bootstrap.servers": bootstrap, "linger.ms": "5",
                          "batch.size": String(RecordBounds.Incoming.requestsTopicMaxMessageBytes)]
        if let property = arguments.option("property") {
            guard let equals = property.firstIndex(of: "=") else { throw UsageError("--property must be KEY=VALUE") }
            properties[String(property[..<equals])] = String(property[property.index(after: equals)...])
        }
        try arguments.rejectUnknown()
        guard keyID == nil || signVariable != nil else { throw UsageError("--key-id names the key of --sign-env; give both") }
        var signer: RequestSigner?
        if let signVariable {
            guard let value = ProcessInfo.processInfo.environment[signVariable], !value.isEmpty else {
                throw CommandFailure("--sign-env names \(signVariable), which is not set")
            }
            signer = RequestSigner(secret: Sensitive(value), keyID: keyID)
        }
        let input: FileHandle
        if let file {
            guard let handle = FileHandle(forReadingAtPath: file) else { throw CommandFailure("cannot read \(file)") }
            input = handle
        } else {
            input = FileHandle.standardInput
        }
        let producer: KafkaProducer
        do {
            producer = try KafkaProducer(configuration: properties)
        } catch {
            throw CommandFailure("could not create a producer: \(error.message)")
        }
        // A signed record names its partition, so the signer needs the topic's partition count.
        var partitionCount = 1
        if signer != nil {
            do {
                partitionCount = try producer.partitionCount(topic: topic, timeoutMs: 10_000)
            } catch {
                producer.close(timeoutMs: 5_000)
                throw CommandFailure("could not read the partition count of \(topic): \(error.message)")
            }
        }
        let tally = Mutex((sent: 0, delivered: 0, failed: 0, lastError: ""))
        for value in LineReader(handle: input) where !value.allSatisfy({ $0 == 32 || $0 == 9 || $0 == 13 }) {
            var message = KafkaOutgoingMessage(topic: topic, key: cardKey(value).map { Array($0.utf8) }, value: value, headers: [])
            if let signer { message = signer.signed(message, partitionCount: partitionCount, nowMs: Timestamps.nowMs()) }
            while true {
                do {
                    try producer.send(message) { result in
                        tally.withLock { tally in
                            switch result {
                            case .success: tally.delivered += 1
                            case .failure(let error):
                                tally.failed += 1
                                tally.lastError = error.description
                            }
                        }
                    }
                    tally.withLock { $0.sent += 1 }
                    break
                } catch where error.code == .queueFull {
                    usleep(2_000)
                } catch {
                    producer.close(timeoutMs: 5_000)
                    throw CommandFailure("produce failed: \(error.message)")
                }
            }
        }
        _ = producer.flush(timeoutMs: 30_000)
        producer.close(timeoutMs: 5_000)
        let final = tally.withLock { $0 }
        if final.failed > 0 || final.delivered < final.sent {
            throw CommandFailure("\(final.delivered) of \(final.sent) delivered to \(topic); last error: \(final.lastError.isEmpty ? "timed out" : final.lastError)")
        }
        writeStandardOutput("produced \(final.delivered) message(s) to \(topic)\n")
        return 0
    }

    /// The `card.id` of a request line, when it is readable.
    static func cardKey(_ value: [UInt8]) -> String? {
        guard let document = try? JSONParser(maxDepth: 64, maxBytes: 1 << 20).parse(value) else { return nil }
        return document["card"]?["id"]?.stringValue
    }
}

/// Reads lines (bytes exactly as written, without the newline) from a file handle lazily.
struct LineReader: Sequence, IteratorProtocol {
    let handle: FileHandle
    private var buffer: [UInt8] = []
    private var finished = false

    init(handle: FileHandle) { self.handle = handle }

    mutating func next() -> [UInt8]? {
        while true {
            if let newline = buffer.firstIndex(of: 10) {
                let line = Array(buffer[..<newline])
                buffer.removeFirst(newline + 1)
                return line
            }
            if finished {
                guard !buffer.isEmpty else { return nil }
                defer { buffer.removeAll() }
                return buffer
            }
            let chunk = handle.readData(ofLength: 1 << 16)
            if chunk.isEmpty { finished = true } else { buffer.append(contentsOf: chunk) }
        }
    }
}
