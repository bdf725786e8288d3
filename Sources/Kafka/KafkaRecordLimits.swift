/// Bounds a consumer holds every record to before it copies anything of it: key, value, header
/// count and header bytes (names and values together). A record over any of them is delivered
/// without its value and headers, and with its key only when that is within its own limit, with
/// `KafkaMessage.oversize` saying how large each part was
/// and what the value's digest is (read in place from the client's buffer), so a hostile record
/// costs its reader a few dozen bytes, never its size (or, for headers, many times its size).
public struct KafkaRecordLimits: Sendable {
    /// Longest key kept, in bytes.
    public var maxKeyBytes: Int
    /// Longest value kept, in bytes.
    public var maxValueBytes: Int
    /// Most headers kept.
    public var maxHeaderCount: Int
    /// Most header bytes kept: every name's and value's bytes added up.
    public var maxHeaderBytes: Int
    /// The digest of a value over the limits, computed from the bytes where they lie.
    public var digest: @Sendable (UnsafeRawBufferPointer) -> [UInt8]

    /// Limits with `digest` for the values of records over them.
    public init(maxKeyBytes: Int, maxValueBytes: Int, maxHeaderCount: Int, maxHeaderBytes: Int,
                digest: @escaping @Sendable (UnsafeRawBufferPointer) -> [UInt8]) {
        self.maxKeyBytes = maxKeyBytes
        self.maxValueBytes = maxValueBytes
        self.maxHeaderCount = maxHeaderCount
        self.maxHeaderBytes = maxHeaderBytes
        self.digest = digest
    }

    /// Whether a record of these sizes is within every limit.
    public func admits(keyBytes: Int?, valueBytes: Int, headerCount: Int, headerBytes: Int) -> Bool {
        (keyBytes ?? 0) <= maxKeyBytes && valueBytes <= maxValueBytes && headerCount <= maxHeaderCount && headerBytes <= maxHeaderBytes
    }
}

extension KafkaMessage {
    /// What a consumer with `KafkaRecordLimits` kept of a record over them: its sizes and its
    /// value's digest. The record's value and headers were not copied, nor its key when over its limit.
    public struct Oversize: Sendable, Hashable {
        /// The key's length in bytes (nil: the record had no key).
        public var keyBytes: Int?
        /// The value's length in bytes.
        public var valueBytes: Int
        /// How many headers it had.
        public var headerCount: Int
        /// Its header names' and values' bytes added up.
        public var headerBytes: Int
        /// The digest of its value (`KafkaRecordLimits.digest`).
        public var valueDigest: [UInt8]

        /// The sizes and digest of a record.
        public init(keyBytes: Int?, valueBytes: Int, headerCount: Int, headerBytes: Int, valueDigest: [UInt8]) {
            self.keyBytes = keyBytes
            self.valueBytes = valueBytes
            self.headerCount = headerCount
            self.headerBytes = headerBytes
            self.valueDigest = valueDigest
        }

        /// The sizes of a record held whole (a record that came another way than through a bounded consumer).
        public init(key: [UInt8]?, value: [UInt8], headers: [KafkaHeader], valueDigest: [UInt8]) {
            self.init(keyBytes: key?.count, valueBytes: value.count, headerCount: headers.count,
                      headerBytes: headers.reduce(0) { $0 + $1.key.utf8.count + ($1.value?.count ?? 0) }, valueDigest: valueDigest)
        }
    }
}
