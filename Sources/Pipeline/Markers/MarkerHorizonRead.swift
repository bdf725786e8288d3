import Observability

/// How far back a catch-up reads for the duplicate horizon, and where the answers it reads go.
struct MarkerHorizonRead: Sendable {
    /// Markers with a record timestamp at or after this (epoch ms) are read: now minus the horizon.
    var sinceMs: Int64
    /// The duplicate horizon: an answer at `at` counts until `at + horizonMs`.
    var horizonMs: Int64
    /// Now (epoch ms).
    var nowMs: Int64
    /// The markers offset up to which this process kept the partition's answers from its
    /// earlier assignment of it (`DuplicateHorizon.remove`): the read resumes from there
    /// instead of looking up the horizon and reading it again (an eager rebalance gives every
    /// partition back and takes it again).
    var keptReadThrough: Int64? = nil

    /// Where the catch-up of markers partition `partition`, handed over at `position` (nil: the
    /// whole partition is read), starts reading for the horizon: at the first marker written
    /// since `sinceMs`, or where this process's kept answers end; nil (the partition's start)
    /// when the broker cannot say, markers older than the horizon then skipped by their time.
    func start(partition: Int32, handOverPosition position: Int64?, reader: any MarkerLogReader, logger: Logger) -> Int64? {
        // Without a hand-over position the whole partition is read anyway.
        guard let position else { return nil }
        if let kept = keptReadThrough, let marks = try? reader.watermarks(partition: partition), kept >= marks.low, kept <= marks.high {
            // Complete up to `kept` (nothing below it deleted since, the partition not
            // recreated): only the markers after it are new answers.
            return min(position, kept)
        }
        do {
            // nil: nothing written since; the hand-over position (or the end) is early enough.
            let since = try reader.offset(partition: partition, atOrAfterTimestampMs: sinceMs)
            // The record just before the answer (the last one when the answer is "none that
            // recent") must be older than the horizon. When it is not, the broker did not search
            // by time (librdkafka's mock cluster answers arbitrarily, or the end): read the
            // partition whole, markers older than the horizon skipped by their time.
            let marks = try reader.watermarks(partition: partition)
            let before = (since ?? marks.high) - 1
            if before >= marks.low, let stamp = try reader.timestamp(partition: partition, at: before), stamp >= sinceMs {
                return nil
            }
            return since.map { min($0, position) } ?? position
        } catch {
            // Read the whole partition instead: markers older than the horizon are skipped by their time.
            logger.warning("offsets for the duplicate horizon could not be looked up; reading the markers partition from its start",
                           [("partition", .integer(Int64(partition))), ("error", .string(error.description))])
            return nil
        }
    }
}
