/// What a requests partition's commit tells its next owner, in the commit's metadata string:
/// `markers=<offset>` (where to start reading markers) and, when offsets after the committed one
/// are already done, `;done=<a>-<b>,<c>,...` (those offsets, as ranges). A next owner redelivered
/// a done record ignores it as answered instead of publishing its decided final again
/// (`FinalDecider`): the result was acknowledged before the offset was done.
///
/// At most `maxRanges` ranges are written (Kafka's `offset.metadata.max.bytes` defaults to 4,096);
/// done offsets past them are simply not said (their decisions are published again: identical
/// duplicates, never a loss). A worker that reads only `markers=<offset>` treats this metadata as
/// having no marker position and reads the markers partition from its start (slower, still right).
struct CommitMetadata: Sendable, Equatable {
    /// The earliest marker offset the next owner must read (nil: unknown).
    var markers: Int64?
    /// Offsets after the committed one that are done.
    var done: [ClosedRange<Int64>] = []

    /// Ranges written at most.
    static let maxRanges = 150

    /// The metadata string (nil when there is nothing to say).
    var encoded: String? {
        var parts: [String] = []
        if let markers { parts.append("markers=\(markers)") }
        if !done.isEmpty {
            let ranges = done.prefix(Self.maxRanges).map { $0.lowerBound == $0.upperBound ? "\($0.lowerBound)" : "\($0.lowerBound)-\($0.upperBound)" }
            parts.append("done=" + ranges.joined(separator: ","))
        }
        return parts.isEmpty ? nil : parts.joined(separator: ";")
    }

    /// Reads a commit's metadata; parts that do not read are ignored (nothing is assumed from them).
    init(parsing metadata: String?) {
        guard let metadata else { return }
        for part in metadata.split(separator: ";") {
            if part.hasPrefix("markers="), let offset = Int64(part.dropFirst("markers=".count)), offset >= 0 {
                markers = offset
            } else if part.hasPrefix("done=") {
                var ranges: [ClosedRange<Int64>] = []
                for item in part.dropFirst("done=".count).split(separator: ",").prefix(Self.maxRanges) {
                    let bounds = item.split(separator: "-", maxSplits: 1).map { Int64($0) }
                    guard let low = bounds.first ?? nil, low >= 0 else { ranges = []; break }
                    let high = bounds.count == 2 ? bounds[1] : low
                    guard let high, high >= low else { ranges = []; break }
                    ranges.append(low...high)
                }
                done = ranges
            }
        }
    }

    /// Metadata with these parts.
    init(markers: Int64?, done: [ClosedRange<Int64>] = []) {
        self.markers = markers
        self.done = done
    }

    /// Whether `offset` is among the done ones.
    func isDone(_ offset: Int64) -> Bool { done.contains { $0.contains(offset) } }
}
