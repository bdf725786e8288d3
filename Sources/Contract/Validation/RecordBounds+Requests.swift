extension RecordBounds {
    /// Bounds of a record read from the requests topic (CONTRACT "Record bounds"), held as the
    /// record is read, before anything of it is kept, and before any other check (its signature's
    /// included): a record over any of them is dead-lettered `oversize` as its sizes and its
    /// value's digest, never whole.
    public struct Incoming: Sendable, Hashable {
        /// Longest key, in bytes.
        public var maxKeyBytes: Int
        /// Longest value, in bytes.
        public var maxValueBytes: Int
        /// Most headers.
        public var maxHeaderCount: Int
        /// Most header bytes: every name's and value's bytes added up.
        public var maxHeaderBytes: Int

        /// Bounds from their four figures.
        public init(maxKeyBytes: Int, maxValueBytes: Int, maxHeaderCount: Int, maxHeaderBytes: Int) {
            self.maxKeyBytes = maxKeyBytes
            self.maxValueBytes = maxValueBytes
            self.maxHeaderCount = maxHeaderCount
            self.maxHeaderBytes = maxHeaderBytes
        }

        /// The requests topic's: the key is a card id (at most 128 bytes; twice that is allowed);
        /// the value a request (the contract's 64 KiB); 64 headers of 16 KiB together, where the
        /// contract's own (signature, timestamp, reply route, trace context, replay) take under
        /// 1 KiB and the rest is room for what producers' frameworks add.
        public static let requests = Incoming(maxKeyBytes: 256, maxValueBytes: RequestLimits().maxBytes,
                                              maxHeaderCount: 64, maxHeaderBytes: 16 * 1_024)

        /// The requests topic's `max.message.bytes` (`Config/topics.json`): 256 KiB, three records
        /// at the bounds in one batch, so the broker refuses what the worker could only
        /// dead-letter. A producer's batch must fit too: librdkafka producers of the topic keep
        /// `batch.size` at most this (the project's own do).
        public static let requestsTopicMaxMessageBytes = 256 * 1_024

        /// Each bound a record of these sizes breaks, in one line with the figures; nil when it
        /// is within them all.
        public func problem(keyBytes: Int?, valueBytes: Int, headerCount: Int, headerBytes: Int) -> String? {
            var broken: [String] = []
            if let keyBytes, keyBytes > maxKeyBytes { broken.append("a key of \(keyBytes) bytes (at most \(maxKeyBytes))") }
            if valueBytes > maxValueBytes { broken.append("a value of \(valueBytes) bytes (at most \(maxValueBytes))") }
            if headerCount > maxHeaderCount { broken.append("\(headerCount) headers (at most \(maxHeaderCount))") }
            if headerBytes > maxHeaderBytes { broken.append("\(headerBytes) bytes of headers (at most \(maxHeaderBytes))") }
            guard !broken.isEmpty else { return nil }
            return "the record has " + broken.joined(separator: ", ") + ": it was not read further; send a smaller request"
        }
    }
}
