import Foundation
import Kafka
import Pipeline
import ProvisionerCLI
import Recovery

/// `bench horizon`: what the durable duplicate horizon costs at 24 h of `--rate` answered requests
/// per second in one partition. The real `AnsweredIndex` is filled to that size (time, bytes
/// allocated, lookups per second), and the real marker catch-up reads a markers
/// partition of `--markers` `completed` markers from the embedded broker; the catch-up time of a
/// full day is extrapolated from its rate.
enum HorizonBenchmark {
    /// Options.
    struct Options: BenchOptions {
        /// Answered requests per second in one partition.
        var rate = 300
        /// Hours of horizon.
        var hours = 24
        /// Markers written and read back for the catch-up rate.
        var markers = 500_000
        /// Reads the options given.
        mutating func read(_ arguments: inout CommandArguments) throws {
            rate = try arguments.rate(default: rate)
            hours = try arguments.integer("hours", default: hours, in: 1...168)
            markers = try arguments.integer("markers", default: markers, in: 1_000...50_000_000)
        }
    }

    /// Produces `message`, waiting while the local queue is full.
    private static func send(_ message: KafkaOutgoingMessage, with producer: KafkaProducer) throws(KafkaError) {
        while true {
            do {
                try producer.send(message) { _ in }
                return
            } catch {
                guard error.code == .queueFull else { throw error }
                usleep(1_000)
            }
        }
    }

    /// Runs both measurements.
    static func run(_ options: Options, progress: @escaping (String) -> Void) throws -> BenchmarkReport {
        let entries = options.rate * options.hours * 3_600
        progress("filling an index with \(entries) answered ids")
        let fill = DuplicateHorizonMeasurement.fill(entries: entries)

        // The CPU part of a catch-up, without the broker: decode each marker and index it.
        progress("decoding and indexing 1,000,000 markers in memory")
        let encoded = (0..<1_000_000).map { number in
            CallMarker(requestID: "req-\(number)-0123abcd", program: "bench-program", state: .completed, requestOffset: Int64(number), atMs: 1_796_000_000_000,
                       worker: "bench-worker-1", outcome: .answered).message(topic: "t", partition: 0).value ?? []
        }
        let decodeStart = Date()
        var decodedIndex = AnsweredIndex(maxEntries: encoded.count)
        for bytes in encoded {
            guard let marker = CallMarker.decode(bytes) else { continue }
            decodedIndex.insert(AnsweredIndex.Fingerprint(program: marker.program, requestID: marker.requestID, partition: 0), expiresAtMs: marker.atMs + 86_400_000, nowMs: marker.atMs)
        }
        let decodePerSecond = Double(decodedIndex.count) / max(0.001, Date().timeIntervalSince(decodeStart))

        progress("writing \(options.markers) completed markers to the embedded broker")
        let cluster = try KafkaMockCluster(brokers: 1)
        try cluster.createTopic("bench.markers", partitions: 1, replicationFactor: 1)
        let producer = try KafkaProducer(configuration: ["bootstrap.servers": cluster.bootstrapServers, "linger.ms": "100", "batch.num.messages": "10000", "batch.size": "4000000"])
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        for number in 0..<options.markers {
            let marker = CallMarker(requestID: "req-\(number)-\(UUID().uuidString.prefix(8))", program: "bench-program", state: .completed, requestOffset: Int64(number),
                                    atMs: now - Int64(options.markers - number), worker: "bench-worker-1", outcome: .answered)
            try send(marker.message(topic: "bench.markers", partition: 0), with: producer)
        }
        _ = producer.flush(timeoutMs: 120_000)
        producer.close(timeoutMs: 5_000)
        progress("reading them back with the worker's catch-up")
        let read = try DuplicateHorizonMeasurement.catchUp(properties: ["bootstrap.servers": cluster.bootstrapServers, "group.id": "bench-horizon"],
                                                           topic: "bench.markers", partition: 0,
                                                           horizonMs: Int64(options.hours) * 3_600_000, maxEntries: entries)
        // The mock broker keeps only its newest records (its log start moves): the rate counts
        // the markers it still held and the catch-up read and indexed.
        let perSecond = Double(read.held) * 1000 / Double(max(1, read.readMs))
        let dayMs = Double(entries) / perSecond * 1000
        let bytesPerEntry = Double(fill.bytes) / Double(max(1, entries))
        let rows: [[String]] = [
            ["index entries (\(options.rate)/s × \(options.hours) h)", "\(entries)"],
            ["index allocated", String(format: "%.0f MiB (%.1f B/entry)", Double(fill.bytes) / 1_048_576, bytesPerEntry)],
            ["fill time", "\(fill.fillMs) ms"],
            ["lookups", String(format: "%.0f /s", fill.lookupsPerSecond)],
            ["catch-up read (\(options.markers) written, the mock keeps its newest)", "\(read.readMs) ms, \(read.held) read and indexed"],
            ["catch-up rate (mock broker fetch + decode + index)", String(format: "%.0f markers/s", perSecond)],
            ["decode + index only (no broker)", String(format: "%.0f markers/s (full horizon: %.0f s)", decodePerSecond, Double(entries) / decodePerSecond)],
            ["catch-up of the full horizon (extrapolated)", String(format: "%.0f s", dayMs / 1000)],
        ]
        let json = """
            {"scenario":"horizon","entries":\(entries),"index_bytes":\(fill.bytes),"bytes_per_entry":\(String(format: "%.1f", bytesPerEntry)),\
            "fill_ms":\(fill.fillMs),\
            "lookups_per_second":\(String(format: "%.0f", fill.lookupsPerSecond)),"markers_written":\(options.markers),"markers_read":\(read.held),"read_ms":\(read.readMs),\
            "decode_index_markers_per_second":\(String(format: "%.0f", decodePerSecond)),"catch_up_markers_per_second":\(String(format: "%.0f", perSecond)),"full_horizon_catch_up_s":\(String(format: "%.0f", dayMs / 1000))}
            """
        return BenchmarkReport(title: "duplicate horizon: index memory and catch-up time", columns: ["measure", "value"], rows: rows,
                               notes: ["catch-up against librdkafka's mock broker in this process (which keeps only its newest records); a real broker's fetch rate differs"],
                               json: json)
    }
}
