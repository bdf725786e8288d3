import Contract
import TestSupport

/// Reads which requests partitions a `provisioner worker` child owns from its JSON log lines.
struct ChildWorkerLog: Sendable {
    let process: ChildProcess

    var ownedPartitions: Set<Int32> {
        var owned: Set<Int32> = []
        for line in process.standardErrorLines where line.hasPrefix("{") && line.contains("\"partitions") {
            guard let entry = try? JSONParser(maxDepth: 8, maxBytes: 1 << 20).parse(Array(line.utf8)),
                  let message = entry["msg"]?.stringValue, let list = entry["partitions"]?.stringValue else { continue }
            let partitions = list.split(separator: ",").compactMap { Int32($0) }
            if message == "partitions assigned" {
                owned.formUnion(partitions)
            } else if message.hasPrefix("partitions revoked") || message.hasPrefix("partitions lost") {
                owned.subtract(partitions)
            }
        }
        return owned
    }
}
