import HTTP
import Kafka

extension ConsoleApp {
    func lagPage(session: ConsoleSession) -> HTTPServerResponse {
        let rows: [PartitionLag]
        do {
            rows = try LagReader(properties: context.kafka, groupID: context.groupID).read([context.topics.requests, context.topics.reconcile])
        } catch {
            return Self.problem("Lag", "could not read offsets: \(error.description)", session: session, current: "/lag")
        }
        var html = "<h2>Lag of group \(HTML.escape(context.groupID))</h2>"
        html += "<p class=\"note\">Committed offset of the worker group against the end offset, per partition; read by "
        html += "OffsetFetch without joining the group.</p>"
        html += "<p class=\"note\">Paused: which worker (its /metrics endpoint) has the partition paused, from "
        html += "<code>\(PausedPartitions.metric)</code> in the last scrape (backpressure, marker catch-up, the reconcile hold limit).</p>"
        html += "<p class=\"note\">Client lag and fetch state: what the owning worker's Kafka client reports (librdkafka statistics, "
        html += "<code>\(ClientPartitionStates.lagMetric)</code> and <code>\(ClientPartitionStates.fetchStateMetric)</code>, every "
        html += "<code>statistics.interval.ms</code>): its lag counts against the high watermark of its last fetch, and a state other "
        html += "than <code>active</code> for long means the partition is not being fetched.</p>"
        let latest = context.monitor.latest
        let pausedBy = PausedPartitions(latest)
        let clients = ClientPartitionStates(latest)
        for topic in [context.topics.requests, context.topics.reconcile] {
            let topicRows = rows.filter { $0.topic == topic }
            html += "<h3>\(HTML.escape(topic)) (lag \(topicRows.map(\.lag).reduce(0, +)))</h3>"
            html += HTML.table(["Partition", "Committed", "End", "Lag", "Client lag", "Fetch state", "Paused"],
                               topicRows.map { row in
                                   let client = clients.cells(topic: topic, partition: row.partition)
                                   return [String(row.partition), row.committed.map(String.init) ?? "none", String(row.end), String(row.lag),
                                           client.lag, client.fetchState, pausedBy.cell(topic: topic, partition: row.partition)]
                               },
                               id: "lag-\(topic)",
                               cellIDs: topicRows.map { [nil, nil, nil, nil, "client-lag-\(topic)-\($0.partition)",
                                                         "fetch-state-\(topic)-\($0.partition)", "paused-\(topic)-\($0.partition)"] })
        }
        html += "<h3>Broker round trips (per worker client, last statistics interval)</h3>"
        html += HTML.table(["Worker endpoint", "Client", "Broker", "Mean", "p99"],
                           clients.roundTrips.map { [$0.endpoint, $0.client, $0.broker, Self.milliseconds($0.average), Self.milliseconds($0.p99)] },
                           id: "round-trips")
        html += "<h3>Paused partitions (per worker, from /metrics)</h3>"
        let paused = context.monitor.latest?.samples("provisioner_paused_partitions") ?? []
        html += HTML.table(["Worker endpoint", "Paused"], paused.map { [$0.endpoint, OverviewFigures.format($0.sample.number ?? 0)] }, id: "paused")
        return Self.document(title: "Lag", body: html, session: session, current: "/lag")
    }

    /// Seconds as "12.3 ms" ("-" when not reported).
    static func milliseconds(_ seconds: Double?) -> String {
        guard let seconds, seconds.isFinite else { return "-" }
        return "\((seconds * 10_000).rounded() / 10) ms"
    }
}
