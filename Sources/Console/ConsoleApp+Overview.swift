import Contract
import HTTP
import Observability

extension ConsoleApp {
    private static let figureLabels: [(String, String)] = [
        ("requests_per_second", "Requests / s"), ("requests_total", "Results published"), ("e2e_p50", "End-to-end p50 (last minute)"),
        ("e2e_p99", "End-to-end p99 (last minute)"), ("deadline_misses", "Deadline misses"), ("dead_letters_per_hour", "Dead letters / hour"),
        ("dead_letters_total", "Dead letters"), ("reconcile_pending", "Reconciliations pending"), ("consumer_lag", "Consumer lag"),
        ("paused_partitions", "Paused partitions"), ("workers_up", "Workers scraped"),
    ]

    func overviewPage(session: ConsoleSession) -> HTTPServerResponse {
        let figures = context.monitor.figures()
        let text = Dictionary(figures.figures.map { ($0.id, $0.text) }, uniquingKeysWith: { first, _ in first })
        var html = "<h2>Overview</h2><div class=\"cards\">"
        for (id, label) in Self.figureLabels {
            html += "<div class=\"card\"><div class=\"label\">\(HTML.escape(label))</div><div class=\"value\" id=\"\(id)\">\(HTML.escape(text[id] ?? "–"))</div></div>"
        }
        html += "</div><div class=\"charts\">"
        let charts = Dictionary(figures.charts.map { ($0.id, $0.points) }, uniquingKeysWith: { first, _ in first })
        for (id, label) in [("chart_requests", "Requests / s"), ("chart_p99", "End-to-end p99"), ("chart_lag", "Consumer lag"),
                            ("chart_dead_letters", "Dead letters")] {
            html += "<div><div class=\"note\">\(HTML.escape(label)), up to the last 15 minutes</div>"
            html += "<svg class=\"chart\" viewBox=\"0 0 \(Int(OverviewFigures.chartWidth)) \(Int(OverviewFigures.chartHeight))\" preserveAspectRatio=\"none\">"
            html += "<polyline id=\"\(id)\" points=\"\(HTML.escape(charts[id] ?? ""))\"></polyline></svg></div>"
        }
        html += "</div><div class=\"columns\"><div><h3>Results by status</h3>"
        html += HTML.table(["Status", "Results"], figures.resultsByStatus.map { [$0.status, OverviewFigures.format($0.count)] },
                           id: "statuses", cellIDs: figures.resultsByStatus.map { [nil, "status_\($0.status)"] })
        html += "</div><div><h3>Circuit breakers</h3>"
        html += HTML.table(["Program", "State"], figures.breakers.map { [$0.program, $0.state] }, id: "breakers",
                           cellIDs: figures.breakers.map { [nil, "breaker_\($0.program)"] })
        html += "</div></div>"
        if let unreachable = context.monitor.latest?.unreachable, !unreachable.isEmpty {
            html += "<p class=\"bad\">Not answering: \(HTML.escape(unreachable.joined(separator: ", ")))</p>"
        }
        return Self.document(title: "Overview", body: html, session: session, current: "/", stream: "/events/overview")
    }

    /// The Overview stream: the figures now, then after every scrape while the session lives
    /// (`once`: the figures now, then the response ends).
    func overviewEvents(session: String, once: Bool) -> HTTPServerResponse {
        let stream = once ? nil : HTTPEventStream()
        if let stream { overviewStreams.withLock { $0.append((stream, session)) } }
        return Self.eventStream(first: overviewJSON(), stream: stream, retryMs: 3_000)
    }

    /// Sends the new figures to every open Overview stream; ends those whose session ended.
    func publishOverview() {
        let now = Timestamps.nowMs()
        let open = overviewStreams.withLock { streams in
            streams.removeAll { $0.stream.isFinished }
            return streams
        }
        guard !open.isEmpty else { return }
        let event = Self.event(overviewJSON())
        for (stream, session) in open {
            if sessions.session(session, nowMs: now) == nil { stream.close() } else { stream.send(event) }
        }
    }

    func overviewJSON() -> [UInt8] {
        let figures = context.monitor.figures()
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("text")
        writer.beginObject()
        for (id, text) in figures.figures { writer.key(id); writer.string(text) }
        writer.endObject()
        writer.key("points")
        writer.beginObject()
        for (id, points) in figures.charts { writer.key(id); writer.string(points) }
        writer.endObject()
        writer.endObject()
        return writer.bytes
    }
}
