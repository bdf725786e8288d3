import CRdKafka
import Synchronization

/// Where librdkafka's own log lines go. By default librdkafka prints them to standard error in its
/// own format; once a sink is installed, every client created afterwards hands them to it (from
/// librdkafka's internal threads), so a worker can write them as structured log lines.
public enum KafkaLog {
    /// One librdkafka log line.
    public struct Record: Sendable {
        /// syslog severity (0 emergency … 7 debug).
        public var severity: Int32
        /// librdkafka's facility (`CONFWARN`, `FAIL`, `REQTMOUT`, …).
        public var facility: String
        /// The client that logged (`rdkafka#consumer-3`).
        public var client: String
        /// The message, secret property values removed (`KafkaSecretRedaction`).
        public var message: String
    }

    private static let sink = Mutex<(@Sendable (Record) -> Void)?>(nil)

    /// Routes librdkafka logs of clients created from now on to `handler` (nil: back to stderr).
    public static func install(_ handler: (@Sendable (Record) -> Void)?) {
        sink.withLock { $0 = handler }
    }

    static var isInstalled: Bool { sink.withLock { $0 != nil } }

    static func emit(_ record: Record) {
        sink.withLock { $0 }?(record)
    }

    /// Attaches the forwarding callback to `conf` when a sink is installed.
    static func attach(to conf: OpaquePointer) {
        guard isInstalled else { return }
        rd_kafka_conf_set_log_cb(conf, kafkaLogCallback)
    }
}

/// librdkafka's `log_cb`: forwards to the installed sink.
func kafkaLogCallback(_ handle: OpaquePointer?, _ level: Int32, _ facility: UnsafePointer<CChar>?, _ buffer: UnsafePointer<CChar>?) {
    KafkaLog.emit(KafkaLog.Record(severity: level, facility: facility.map { String(cString: $0) } ?? "",
                                  client: handle.map { String(cString: rd_kafka_name($0)) } ?? "",
                                  message: KafkaSecretRedaction.redact(buffer.map { String(cString: $0) } ?? "")))
}
