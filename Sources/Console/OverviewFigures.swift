/// The Overview page's numbers and chart lines, derived from the scrapes kept in memory.
public struct OverviewFigures: Sendable {
    /// Figure id → text (`requests_per_second` → `12.3`); the page and the SSE stream use the same ids.
    public var figures: [(id: String, text: String)] = []
    /// Chart id → SVG polyline points over the last 15 minutes.
    public var charts: [(id: String, points: String)] = []
    /// Status → results since the workers started.
    public var resultsByStatus: [(status: String, count: Double)] = []
    /// Program → breaker state (`closed`, `half-open`, `open`), the worst across workers.
    public var breakers: [(program: String, state: String)] = []

    /// Chart size in SVG units.
    public static let chartWidth = 300.0
    /// Chart height in SVG units.
    public static let chartHeight = 60.0
    /// How far back the charts reach.
    public static let windowMs: Int64 = 15 * 60_000

    /// Derives the figures from `points` (oldest first) and the newest scrape.
    public init(points: [OverviewPoint], latest: MetricsScrape?, endpoints: Int) {
        let last = points.last
        let previous = points.count >= 2 ? points[points.count - 2] : nil
        func rate(_ value: (OverviewPoint) -> Double, from a: OverviewPoint?, to b: OverviewPoint?) -> Double? {
            guard let a, let b, b.atMs > a.atMs else { return nil }
            let delta = value(b) - value(a)
            return delta < 0 ? nil : delta / (Double(b.atMs - a.atMs) / 1000)
        }
        let perSecond = rate(\.requests, from: previous, to: last)
        figures.append(("requests_per_second", perSecond.map { Self.format($0) } ?? "–"))
        figures.append(("requests_total", last.map { Self.format($0.requests) } ?? "–"))
        let reference = points.last { ($0.atMs) <= (last?.atMs ?? 0) - 60_000 } ?? points.first
        if let last, let reference, reference.atMs < last.atMs {
            let recent = Quantile.difference(last.endToEnd, reference.endToEnd)
            figures.append(("e2e_p50", Quantile.of(0.5, buckets: recent).map { Self.milliseconds($0) } ?? "–"))
            figures.append(("e2e_p99", Quantile.of(0.99, buckets: recent).map { Self.milliseconds($0) } ?? "–"))
        } else {
            figures.append(("e2e_p50", last.flatMap { Quantile.of(0.5, buckets: $0.endToEnd) }.map { Self.milliseconds($0) } ?? "–"))
            figures.append(("e2e_p99", last.flatMap { Quantile.of(0.99, buckets: $0.endToEnd) }.map { Self.milliseconds($0) } ?? "–"))
        }
        figures.append(("deadline_misses", last.map { Self.format($0.deadlineMisses) } ?? "–"))
        let oldest = points.first
        let hourly = rate(\.deadLetters, from: oldest, to: last).map { Self.format($0 * 3600) }
        figures.append(("dead_letters_per_hour", hourly ?? "–"))
        figures.append(("dead_letters_total", last.map { Self.format($0.deadLetters) } ?? "–"))
        figures.append(("reconcile_pending", latest.map { Self.format($0.sum("provisioner_reconcile_backlog")) } ?? "–"))
        figures.append(("consumer_lag", last.map { Self.format($0.lag) } ?? "–"))
        figures.append(("paused_partitions", latest.map { Self.format($0.sum("provisioner_paused_partitions")) } ?? "–"))
        let up = latest.map { $0.expositions.count } ?? 0
        figures.append(("workers_up", "\(up) of \(endpoints)"))

        var statuses: [String: Double] = [:]
        for (_, sample) in latest?.samples("provisioner_requests_total") ?? [] {
            statuses[sample.labels["status"] ?? "unknown", default: 0] += sample.number ?? 0
        }
        resultsByStatus = statuses.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        for (status, count) in resultsByStatus { figures.append(("status_\(status)", Self.format(count))) }

        var worst: [String: Double] = [:]
        for (_, sample) in latest?.samples("provisioner_breaker_state") ?? [] {
            let program = sample.labels["program"] ?? "unknown"
            worst[program] = max(worst[program] ?? 0, sample.number ?? 0)
        }
        breakers = worst.sorted { $0.key < $1.key }.map { ($0.key, $0.value >= 2 ? "open" : $0.value >= 1 ? "half-open" : "closed") }
        for (program, state) in breakers { figures.append(("breaker_\(program)", state)) }

        let pairs = zip(points, points.dropFirst())
        let now = last?.atMs ?? 0
        // The x axis spans what is kept (at least 30 s, at most 15 minutes): a fresh console draws across the chart.
        let span = min(Self.windowMs, max(30_000, now - (oldest?.atMs ?? now)))
        charts.append(("chart_requests", Self.polyline(pairs.map { ($1.atMs, rate(\.requests, from: $0, to: $1) ?? 0) }, nowMs: now, spanMs: span)))
        charts.append(("chart_p99", Self.polyline(pairs.map { ($1.atMs, Quantile.of(0.99, buckets: Quantile.difference($1.endToEnd, $0.endToEnd)) ?? 0) },
                                                  nowMs: now, spanMs: span)))
        charts.append(("chart_lag", Self.polyline(points.map { ($0.atMs, $0.lag) }, nowMs: now, spanMs: span)))
        charts.append(("chart_dead_letters", Self.polyline(points.map { ($0.atMs, $0.deadLetters - (oldest?.deadLetters ?? 0)) }, nowMs: now, spanMs: span)))
    }

    /// SVG points for `series` (time, value) scaled into the chart, the right edge at `nowMs`, the
    /// width `spanMs`.
    static func polyline(_ series: [(Int64, Double)], nowMs: Int64, spanMs: Int64 = windowMs) -> String {
        guard !series.isEmpty else { return "" }
        let top = max(series.map { $0.1.isFinite ? $0.1 : 0 }.max() ?? 0, 1e-9)
        return series.map { time, value in
            let x = chartWidth - Double(nowMs - time) / Double(max(spanMs, 1)) * chartWidth
            let y = chartHeight - (value.isFinite ? value : 0) / top * (chartHeight - 4) - 2
            return "\(format(max(0, x), decimals: 1)),\(format(y, decimals: 1))"
        }.joined(separator: " ")
    }

    /// A number with at most one decimal (integers without).
    static func format(_ value: Double, decimals: Int = 1) -> String {
        guard value.isFinite else { return "–" }
        guard abs(value) < 1e15 else { return String(value) }
        if value == value.rounded() { return String(Int64(value)) }
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let rounded = (value * scale).rounded() / scale
        return rounded == rounded.rounded() ? String(Int64(rounded)) : String(rounded)
    }

    static func milliseconds(_ seconds: Double) -> String { format(seconds * 1000) + " ms" }
}
