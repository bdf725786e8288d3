import Contract
import Foundation
import ProvisionerCLI

/// `bench jwe`: the result payload's JWE per reply-key curve, in this process (no Kafka, no
/// worker): CPU per seal for the whole process (the ephemeral key made ahead on the background
/// refill included), CPU per seal on the sealing thread alone (what a request waits for), CPU per
/// decryption (the backend's side), and the compact form's length, for a payload of Imprint's size.
enum JWEBenchmark {
    /// Options.
    struct Options: BenchOptions {
        /// Seals (and decryptions) per curve.
        var seals = 5_000
        /// Plaintext bytes (an Apple Pay payload is about 3.5 KB).
        var payloadBytes = 3_500
        /// Reads the options given.
        mutating func read(_ arguments: inout CommandArguments) throws {
            seals = try arguments.integer("seals", default: seals, in: 10...1_000_000)
            payloadBytes = try arguments.integer("payload-bytes", default: payloadBytes, in: 1...1_000_000)
        }
    }

    /// Runs the scenario; `progress` gets a line per step.
    static func run(_ options: Options, progress: @escaping (String) -> Void) throws -> BenchmarkReport {
        let plaintext = Array(String(repeating: "x", count: options.payloadBytes).utf8)
        var rows: [[String]] = []
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("scenario"); writer.string("jwe")
        writer.key("curves"); writer.beginObject()
        for curve in JWKCurve.allCases {
            let key = try ReplyPrivateKey.generate(curve)
            let recipient = try key.recipient
            for _ in 0..<100 { _ = try JWE.encrypt(plaintext, to: recipient) }  // warm: pools filled, contexts made
            usleep(200_000)
            progress("\(curve.rawValue): \(options.seals) seals")
            let processBefore = ProcessUsage.now().totalMicroseconds
            let threadBefore = threadMicroseconds()
            var compact = ""
            for _ in 0..<options.seals { compact = try JWE.encrypt(plaintext, to: recipient) }
            let threadSeal = Double(threadMicroseconds() - threadBefore) / Double(options.seals)
            usleep(300_000)  // the background refill finishes its last keys
            let processSeal = Double(ProcessUsage.now().totalMicroseconds - processBefore) / Double(options.seals)
            let decryptBefore = threadMicroseconds()
            for _ in 0..<options.seals where try JWE.decrypt(compact, with: key).count != plaintext.count {
                throw BenchmarkError("a \(curve.rawValue) JWE did not decrypt to its plaintext")
            }
            let decrypt = Double(threadMicroseconds() - decryptBefore) / Double(options.seals)
            rows.append([curve.rawValue, String(options.seals), PipelineBench.figure(processSeal, digits: 1),
                         PipelineBench.figure(threadSeal, digits: 1), PipelineBench.figure(decrypt, digits: 1), String(compact.utf8.count)])
            writer.key(curve.rawValue); writer.beginObject()
            writer.key("cpu_us_per_seal"); writer.string(PipelineBench.figure(processSeal, digits: 1))
            writer.key("sealing_thread_cpu_us_per_seal"); writer.string(PipelineBench.figure(threadSeal, digits: 1))
            writer.key("cpu_us_per_decrypt"); writer.string(PipelineBench.figure(decrypt, digits: 1))
            writer.key("compact_bytes"); writer.integer(Int64(compact.utf8.count))
            writer.endObject()
        }
        writer.endObject()
        writer.endObject()
        return BenchmarkReport(
            title: "jwe: ECDH-ES + A256GCM per reply-key curve, \(options.payloadBytes)-byte payload, in one process",
            columns: ["CURVE", "SEALS", "CPU µs/SEAL", "SEALING THREAD µs/SEAL", "DECRYPT µs", "COMPACT BYTES"],
            rows: rows,
            notes: [
                "CPU µs/SEAL: the whole process, so the ephemeral keys made ahead by the background refill are included",
                "SEALING THREAD: the caller's own CPU per JWE.encrypt (the part a request waits for)",
                PipelineBench.machine,
            ],
            json: writer.text)
    }

    private static func threadMicroseconds() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
        return Int64(spec.tv_sec) * 1_000_000 + Int64(spec.tv_nsec) / 1_000
    }
}
