import Synchronization

/// Holds every metric of a process and renders them in Prometheus text format (version 0.0.4).
///
/// Series are created on first use and live for the process; callers keep the returned handles
/// on hot paths to avoid the lookup.
public final class MetricsRegistry: Sendable {
    private enum Kind: String, Sendable { case counter, gauge, histogram }

    fileprivate enum Series: Sendable {
        case counter(Counter)
        case gauge(Gauge)
        case computed(@Sendable () -> Double)
        case histogram(Histogram)
    }

    private struct Family: Sendable {
        var kind: Kind
        var help: String
        var series: [MetricLabels: Series] = [:]
    }

    private let families = Mutex<[String: Family]>([:])

    /// Creates an empty registry.
    public init() {}

    /// The counter `name` with `labels`, created on first use.
    public func counter(_ name: String, help: String, labels: MetricLabels = .none) -> Counter {
        series(name, kind: .counter, help: help, labels: labels) { .counter(Counter()) }.counterValue!
    }

    /// The gauge `name` with `labels`, created on first use.
    public func gauge(_ name: String, help: String, labels: MetricLabels = .none) -> Gauge {
        series(name, kind: .gauge, help: help, labels: labels) { .gauge(Gauge()) }.gaugeValue!
    }

    /// A gauge whose value is computed at each scrape (consumer lag, queue depth).
    public func computedGauge(_ name: String, help: String, labels: MetricLabels = .none, value: @escaping @Sendable () -> Double) {
        families.withLock { families in
            var family = families[name] ?? Family(kind: .gauge, help: help)
            family.series[labels] = .computed(value)
            families[name] = family
        }
    }

    /// A counter whose value is read at each scrape from a count kept elsewhere (evictions of a
    /// bounded cache); `value` must never decrease.
    public func computedCounter(_ name: String, help: String, labels: MetricLabels = .none, value: @escaping @Sendable () -> Double) {
        families.withLock { families in
            var family = families[name] ?? Family(kind: .counter, help: help)
            precondition(family.kind == .counter, "metric \(name) registered as \(family.kind.rawValue), used as counter")
            family.series[labels] = .computed(value)
            families[name] = family
        }
    }

    /// Replaces every series of the gauge `name` whose labels include all of `scope`'s with
    /// `values` (each a set of labels that includes `scope`), in one step: for reports that
    /// supersede the last one, so a series the new report no longer names (a partition given up, a
    /// broker gone) disappears instead of keeping its last value.
    public func replaceGauges(_ name: String, help: String, scope: MetricLabels, with values: [MetricLabels: Double]) {
        families.withLock { families in
            var family = families[name] ?? Family(kind: .gauge, help: help)
            precondition(family.kind == .gauge, "metric \(name) registered as \(family.kind.rawValue), used as gauge")
            family.series = family.series.filter { labels, _ in !scope.pairs.allSatisfy(labels.pairs.contains) }
            for (labels, value) in values {
                let gauge = Gauge()
                gauge.set(value)
                family.series[labels] = .gauge(gauge)
            }
            families[name] = family
        }
    }

    /// The histogram `name` with `labels`, created on first use with `buckets`.
    public func histogram(_ name: String, help: String, labels: MetricLabels = .none,
                          buckets: [Double] = Histogram.latencyMillisecondBuckets) -> Histogram {
        series(name, kind: .histogram, help: help, labels: labels) { .histogram(Histogram(upperBounds: buckets)) }.histogramValue!
    }

    /// Current value of a counter or gauge series, if it exists (tests and summaries).
    public func value(_ name: String, labels: MetricLabels = .none) -> Double? {
        let entry = families.withLock { $0[name]?.series[labels] }
        switch entry {
        case .counter(let counter): return Double(counter.value)
        case .gauge(let gauge): return gauge.value
        case .computed(let compute): return compute()
        case .histogram(let histogram): return Double(histogram.count)
        case nil: return nil
        }
    }

    /// Sum of a counter or gauge over every series whose labels include `matching`.
    public func total(_ name: String, matching: [String: String] = [:]) -> Double {
        let entries = families.withLock { $0[name]?.series ?? [:] }
        var total = 0.0
        for (labels, entry) in entries where matching.allSatisfy({ want in labels.pairs.contains { $0.name == want.key && $0.value == want.value } }) {
            switch entry {
            case .counter(let counter): total += Double(counter.value)
            case .gauge(let gauge): total += gauge.value
            case .computed(let compute): total += compute()
            case .histogram(let histogram): total += Double(histogram.count)
            }
        }
        return total
    }

    /// Every series in Prometheus text exposition format, families sorted by name.
    public func renderPrometheus() -> String {
        let snapshot = families.withLock { $0 }
        var text = ""
        for name in snapshot.keys.sorted() {
            let family = snapshot[name]!
            text += "# HELP \(name) \(family.help)\n# TYPE \(name) \(family.kind.rawValue)\n"
            let ordered = family.series.sorted { $0.key.rendered() < $1.key.rendered() }
            for (labels, entry) in ordered {
                switch entry {
                case .counter(let counter):
                    text += "\(name)\(labels.rendered()) \(counter.value)\n"
                case .gauge(let gauge):
                    text += "\(name)\(labels.rendered()) \(Self.format(gauge.value))\n"
                case .computed(let compute):
                    text += "\(name)\(labels.rendered()) \(Self.format(compute()))\n"
                case .histogram(let histogram):
                    let cumulative = histogram.cumulativeCounts
                    for (index, bound) in histogram.upperBounds.enumerated() {
                        text += "\(name)_bucket\(labels.rendered(extra: .init(name: "le", value: Self.format(bound)))) \(cumulative[index])\n"
                    }
                    text += "\(name)_bucket\(labels.rendered(extra: .init(name: "le", value: "+Inf"))) \(cumulative.last ?? 0)\n"
                    text += "\(name)_sum\(labels.rendered()) \(Self.format(histogram.sum))\n"
                    text += "\(name)_count\(labels.rendered()) \(histogram.count)\n"
                }
            }
        }
        return text
    }

    private func series(_ name: String, kind: Kind, help: String, labels: MetricLabels, make: () -> Series) -> Series {
        families.withLock { families in
            if let existing = families[name]?.series[labels] { return existing }
            var family = families[name] ?? Family(kind: kind, help: help)
            precondition(family.kind == kind, "metric \(name) registered as \(family.kind.rawValue), used as \(kind.rawValue)")
            let created = make()
            family.series[labels] = created
            families[name] = family
            return created
        }
    }

    private static func format(_ value: Double) -> String {
        if value == value.rounded() && abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }
}

extension MetricsRegistry.Series {
    fileprivate var counterValue: Counter? { if case .counter(let c) = self { c } else { nil } }
    fileprivate var gaugeValue: Gauge? { if case .gauge(let g) = self { g } else { nil } }
    fileprivate var histogramValue: Histogram? { if case .histogram(let h) = self { h } else { nil } }
}
