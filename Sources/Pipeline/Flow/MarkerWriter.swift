import Kafka
import Recovery

/// Writes a request's call markers (`started` before a call, `completed` after its answer) to
/// the markers partition that matches its requests partition, telling the offset ledger (the
/// marker's offset goes into the commit metadata until the request is committed) and zombie-owner
/// fencing (which of the partition's marker offsets are this process's own) before and after.
struct MarkerWriter: Sendable {
    let publisher: OutputPublisher
    let ledger: OffsetLedger
    let fencing: MarkerFencing
    let topic: String

    /// Writes `marker` for the record at `origin`, trying `attempts` times (default: the
    /// configured attempts); `completion` runs on the producer's thread: keep it short.
    func write(_ marker: CallMarker, for origin: RecordOrigin, attempts: Int? = nil,
               completion: @escaping @Sendable (Settler.MarkerWrite) -> Void) {
        let partition = origin.partition.partition
        ledger.markerWriting(origin.partition, requestOffset: origin.offset, generation: origin.generation)
        fencing.writing(partition)
        publisher.publish([marker.message(topic: topic, partition: partition)], attempts: attempts) { [self] outcome in
            let offset = outcome.reports.first??.offset
            fencing.written(partition, offset: offset)
            ledger.markerWritten(origin.partition, requestOffset: origin.offset, markerOffset: offset, generation: origin.generation)
            completion(Settler.MarkerWrite(delivered: outcome.allDelivered, offset: offset, error: outcome.lastError))
        }
    }
}
