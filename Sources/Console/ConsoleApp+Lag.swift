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
        let pausedBy = PausedPartitions(context.monitor.latest)
        for topic in [context.topics.requests, context.topics.reconcile] {
            let topicRows = rows.filter { $0.topic == topic }
            html += "<h3>\(HTML.escape(topic)) (lag \(topicRows.map(\.lag).reduce(0, +)))</h3>"
            html += HTML.table(["Partition", "Committed", "End", "Lag", "Paused"],
                               topicRows.map { [String($0.partition), $0.committed.map(String.init) ?? "none", String($0.end), String($0.lag),
                                                pausedBy.cell(topic: topic, partition: $0.partition)] },
                               id: "lag-\(topic)",
                               cellIDs: topicRows.map { [nil, nil, nil, nil, "paused-\(topic)-\($0.partition)"] })
        }
        html += "<h3>Paused partitions (per worker, from /metrics)</h3>"
        let paused = context.monitor.latest?.samples("provisioner_paused_partitions") ?? []
        html += HTML.table(["Worker endpoint", "Paused"], paused.map { [$0.endpoint, OverviewFigures.format($0.sample.number ?? 0)] }, id: "paused")
        return Self.document(title: "Lag", body: html, session: session, current: "/lag")
    }
}
