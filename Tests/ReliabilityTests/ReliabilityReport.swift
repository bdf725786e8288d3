import Contract
import Foundation

/// Prints one machine-readable summary line per test, `RELIABILITY {"test":…, …}`, which
/// `docs/RELIABILITY.md` is written from. With `PROVISIONER_RELIABILITY_OUT=FILE` the lines are also
/// appended to FILE.
enum ReliabilityReport {
    static func emit(_ test: String, _ fields: [String: JSONValue]) {
        var object = fields
        object["test"] = .string(test)
        object["variant"] = .string(ReliabilityScale.variant)
        let line = "RELIABILITY " + String(decoding: JSONWriter.encode(.object(object)), as: UTF8.self)
        print(line)
        fflush(nil)
        if let path = ProcessInfo.processInfo.environment["PROVISIONER_RELIABILITY_OUT"], !path.isEmpty {
            if !FileManager.default.fileExists(atPath: path) { _ = FileManager.default.createFile(atPath: path, contents: nil) }
            if let handle = FileHandle(forWritingAtPath: path) {
                handle.seekToEndOfFile()
                handle.write(Data((line + "\n").utf8))
                try? handle.close()
            }
        }
    }

    /// A JSON object of counts.
    static func counts<Key: CustomStringConvertible>(_ values: [Key: Int]) -> JSONValue {
        .object(Dictionary(uniqueKeysWithValues: values.map { ($0.key.description, .integer(Int64($0.value))) }))
    }

    static func int(_ value: Int) -> JSONValue { .integer(Int64(value)) }
    static func int(_ value: Int64) -> JSONValue { .integer(value) }
}
